import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, readPointer } from '../../src/db/embedded-claim.js';
import { removeEmbeddedLedger } from '../../src/db/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { cleanEnv, REPO_ROOT, runCli } from './cli.js';
import { waitFor } from './harness.js';

/**
 * The newcomer's path with the embedded ledger, as a person runs it: the data directory under a
 * private (0700) parent, as root's home is (the postgres user the server runs as cannot pass
 * through it), a second demo over a running one, a report from another terminal, Ctrl-C from the
 * terminal (SIGINT to the whole process group) and a demo killed with SIGKILL.
 */

interface Demo {
  pid: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `demo` in its own process group, as a terminal starts a foreground job. */
function startDemo(env: NodeJS.ProcessEnv, args: string[] = []): Demo {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'demo', ...args], {
    cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { pid: child.pid!, stdout: () => out, stderr: () => err, exited };
}

async function running(demo: Demo): Promise<void> {
  let done = false;
  void demo.exited.then(() => (done = true));
  await waitFor(`the demo to start (stderr: ${demo.stderr().slice(-400)})`, () => {
    if (done) throw new Error(`demo exited: ${demo.stderr()}`);
    return demo.stdout().includes('Ctrl-C stops') || undefined;
  }, 90_000);
}

/**
 * Errors the demo logged. A 503 at the ack deadline is the receiver's answer to a ledger whose
 * commits stalled (a loaded two-core CI machine; test/e2e/demo-ledger-stall.test.ts makes one on
 * purpose), not a fault of the newcomer's path: the summary must still explain what followed.
 */
function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => /"level":(50|60)|ECONNRESET|\n\s+at /.test(l) && !l.includes('no commit within the ack deadline'));
}

let root: string;
let dataDir: string;
let env: NodeJS.ProcessEnv;
const demos: Demo[] = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-private-'));
  await chmod(root, 0o700);
  dataDir = path.join(root, 'data');
  env = cleanEnv({ RECON_DATA_DIR: dataDir, PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'warn' });
});

afterAll(async () => {
  for (const d of demos) {
    try {
      process.kill(-d.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await removeEmbeddedLedger(path.join(dataDir, 'demo'), silentLogger()).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

describe('the embedded ledger on a newcomer machine', () => {
  it('runs the demo under a private directory, refuses a second one, serves reports to other commands, and stops cleanly on Ctrl-C', async () => {
    const first = startDemo(env);
    demos.push(first);
    await running(first);

    const second = await runCli(['demo', '--duration', '5'], env);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(new RegExp(`in use by process ${first.pid} \\(bnpl-recon demo\\)`));
    expect(second.stderr.trim().split('\n').filter((l) => !l.startsWith('npm warn'))).toHaveLength(1);

    // The first demo's ledger is reachable from another terminal with DATABASE_URL unset.
    await waitFor('a poll and deliveries in the demo ledger', async () => {
      const orders = await runCli(['report', 'orders', '--format', 'json'], env);
      expect(orders.code, orders.stderr).toBe(0);
      return (JSON.parse(orders.stdout) as unknown[]).length > 0 || undefined;
    }, 60_000, 2000);
    const report = await runCli(['report', 'discrepancies', '--status', 'all', '--format', 'json'], env);
    expect(report.code, report.stderr).toBe(0);
    expect(Array.isArray(JSON.parse(report.stdout))).toBe(true);

    // Ctrl-C: the whole foreground group gets SIGINT; the embedded server is in its own group.
    // It exits once its drain is done, within SHUTDOWN_TIMEOUT_MS (10 s): nothing left pending
    // (a 20 s wait on the stopped server's exit once held it open after the drain).
    const interrupted = Date.now();
    process.kill(-first.pid, 'SIGINT');
    expect(await first.exited).toBe(0);
    expect(Date.now() - interrupted).toBeLessThan(10_000);
    expect(errorLines(first.stderr())).toEqual([]);
    expect(first.stdout()).toMatch(/final: .*deliveries stored \d+/);
    expect(await readPointer(path.join(dataDir, 'demo'))).toBeUndefined();

    // Once the demo has stopped, a report still reads the ledger it left, and stops it again.
    const after = await runCli(['report', 'orders', '--format', 'json'], { ...env, LOG_LEVEL: 'info' });
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).toMatch(/reading the ledger the demo left/);
    expect((JSON.parse(after.stdout) as unknown[]).length).toBeGreaterThan(0);
    expect(await readPointer(path.join(dataDir, 'demo'))).toBeUndefined();

    // A write command does not make the data dir a new, empty ledger that every later report would
    // read instead of the demo's: it refuses, naming both ways on; pointed at the demo's, it works.
    const refused = await runCli(['reconcile'], env);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/only the one the demo left under .*RECON_DATA_DIR=.*bnpl-recon migrate/s);
    expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
    const onDemo = await runCli(['reconcile'], { ...env, RECON_DATA_DIR: path.join(dataDir, 'demo') });
    expect(onDemo.code, onDemo.stderr).toBe(0);
    expect(JSON.parse(onDemo.stdout)).toMatchObject({ mode: expect.any(String) });
    expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
  }, 240_000);

  it('never answers a read command from a ledger it would have to create', async () => {
    const empty = path.join(root, 'empty');
    const result = await runCli(['report', 'discrepancies'], { ...env, RECON_DATA_DIR: empty });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no ledger to read: DATABASE_URL is unset/);
    expect(result.stdout).toBe('');
    expect(existsSync(path.join(empty, 'postgres'))).toBe(false);
  });

  it('stops an orphaned server left by a demo killed with SIGKILL before reusing its directory', async () => {
    const killed = startDemo(env);
    demos.push(killed);
    await running(killed);
    const pointer = await readPointer(path.join(dataDir, 'demo'));
    const postmaster = Number((await readFile(path.join(pointer!.databaseDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(killed.pid, 'SIGKILL');
    await killed.exited;
    expect(isAlive(postmaster)).toBe(true);

    const next = startDemo(env, ['--duration', '3']);
    demos.push(next);
    expect(await next.exited).toBe(0);
    expect(next.stderr()).toMatch(/stopping an orphaned embedded Postgres/);
    expect(isAlive(postmaster)).toBe(false);
  }, 240_000);

  it('with --duration, settles before it stops: every difference in the final summary is named by the ground truth', async () => {
    const demo = startDemo(env, ['--duration', '40', '--seed', '7']);
    demos.push(demo);
    // On a failure, what the demo printed says why: its final summary and its warnings and errors.
    expect(await demo.exited, `stdout:\n${demo.stdout().slice(-6000)}\nstderr:\n${demo.stderr().slice(-6000)}`).toBe(0);
    const out = demo.stdout();
    expect(out).toContain('settling: the simulator stops injecting');
    const final = out.slice(out.indexOf('\nfinal: '));
    const tallies = /found\/injected: (.*)/.exec(final)?.[1] ?? '';
    const kinds = [...tallies.matchAll(/(\w+) (\d+)\/(\d+)/g)].map(([, kind, found, injected]) => ({ kind: kind!, found: Number(found), injected: Number(injected) }));
    // Forty seconds of a busy simulated merchant inject several kinds.
    expect(kinds.length, final).toBeGreaterThanOrEqual(3);
    expect(final).not.toContain('unexplained');
    // Days of simulated business a minute: invoices are paid out, so the invoice-to-cash kinds show.
    // How many of them the simulator injects in forty seconds depends on the machine's pace: under
    // CI's load one run injected only payout_deduction_mismatch, and one (2026-11-29) none, its
    // payouts having listed few invoices by the end (107 left unpaid). So the bar is one found
    // whenever one was injected; every injected one must be found (the loop below: these kinds
    // have no order-by-order explanation). The simulated weeks of test/e2e/precision-recall.test.ts
    // find each of them whatever the pace.
    const invoiceKinds = ['invoice_paid_out_twice', 'payout_pays_canceled_invoice', 'buyer_paid_merchant_directly', 'payout_deduction_mismatch', 'payout_report_mismatch'];
    const invoiceInjected = kinds.filter((k) => invoiceKinds.includes(k.kind) && k.injected > 0);
    if (invoiceInjected.length > 0) expect(invoiceInjected.filter((k) => k.found > 0).length, final).toBeGreaterThanOrEqual(1);
    // Each difference is named: order by order, or as a kind that needs days of real time.
    for (const k of kinds.filter((t) => t.found !== t.injected)) {
      const byOrder = final.includes(`difference: ${k.kind} found ${k.found}, injected ${k.injected}:`);
      const needsDays = new RegExp(`difference: ${k.kind} ${k.injected - k.found} not found: it needs (PAYOUT_SETTLEMENT_DAYS|INVOICE_PAYOUT_DAYS) of real time`).test(final);
      expect({ kind: k.kind, named: byOrder || needsDays }, final).toEqual({ kind: k.kind, named: true });
    }
    const named = final.split('\n').filter((l) => l.startsWith('    order '));
    for (const line of named) expect(line).toMatch(/: its held-back delivery arrived before any pass saw it late$|: one of its events was delivered out of order, flagged while it was missing and resolved when it came$/);
    expect(errorLines(demo.stderr())).toEqual([]);
  }, 240_000);

  it('a data directory that cannot be one is one clear line naming RECON_DATA_DIR and exit 2, never a stack trace', async () => {
    // /dev/null is a file: the ledger's directory cannot be made under it (ENOTDIR), the setting's fault.
    const result = await runCli(['migrate'], { ...env, RECON_DATA_DIR: '/dev/null/ledger' });
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n').filter((l) => !l.startsWith('npm warn'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^bnpl-recon migrate: invalid setting RECON_DATA_DIR: \/dev\/null\/ledger cannot be a directory \(ENOTDIR/);
  });

  it('start in production refuses an embedded ledger, and plain http to a remote provider, naming the setting', async () => {
    const base = { ...env, PROVIDER_ENV: 'production', PROVIDER_API_KEY: 'prod-key-123', PROVIDER_BASE_URL: 'https://provider.example' };
    const embedded = await runCli(['start'], base);
    expect(embedded.code).toBe(2);
    expect(embedded.stderr).toMatch(/DATABASE_URL is required for start in production/);
    const clear = await runCli(['start'], { ...base, PROVIDER_BASE_URL: 'http://provider.example', DATABASE_URL: 'postgres://x@127.0.0.1:1/x' });
    expect(clear.code).toBe(2);
    expect(clear.stderr).toMatch(/PROVIDER_BASE_URL: plain http/);
  });
});
