import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, spawnCli, type CliChild } from '../e2e/cli.js';

/**
 * `npx bnpl-recon demo | head -40` (a user who wants only the URLs): once the reader closes the
 * pipe, the demo's next 10-second summary write fails with EPIPE. The `report` command ends
 * quietly on EPIPE; the demo crashed with Node's "Unhandled 'error' event" and a stack trace, and
 * its embedded Postgres was left running with no owner.
 */
let dir = '';
let child: CliChild | undefined;

function postgresPid(text: string): number | undefined {
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function leftPostgres(): Promise<number | undefined> {
  const text = await readFile(path.join(dir, 'demo', 'postgres', 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = postgresPid(text);
  return pid !== undefined && alive(pid) ? pid : undefined;
}

afterAll(async () => {
  child?.kill();
  if (dir) {
    // The embedded Postgres this test's demo started, if it outlived the demo.
    const pid = await leftPostgres();
    if (pid !== undefined) {
      process.kill(pid, 'SIGINT');
      for (let i = 0; i < 100 && alive(pid); i += 1) await new Promise((r) => setTimeout(r, 100));
    }
    await rm(dir, { recursive: true, force: true });
  }
});

describe('demo whose stdout reader went away', () => {
  it('neither crashes with a stack trace nor leaves its embedded Postgres running', { timeout: 120_000 }, async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'bnpl-demo-closed-stdout-'));
    await chmod(dir, 0o755);
    child = spawnCli(['demo'], cleanEnv({ RECON_DATA_DIR: dir, PORT: '0', METRICS_PORT: '0' }));
    const started = Date.now();
    while (!child.stdout().includes('Open in a browser')) {
      if (Date.now() - started > 60_000) throw new Error(`the demo did not print its URLs: ${child.stderr().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // The reader (`head`) has what it wanted and exits: the pipe's read end closes.
    child.child.stdout.destroy();
    // The next summary is due within 10 s; give the demo time to meet the closed pipe.
    const within = await Promise.race([child.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 25_000))]);
    if (!within) {
      // Still running (it ignored the closed pipe): stop it as a user would.
      child.child.kill('SIGTERM');
      await child.exited;
    }
    // Let a clean stop finish removing its pid file.
    await new Promise((r) => setTimeout(r, 1_000));
    const orphan = await leftPostgres();
    expect({
      stackTrace: /Unhandled 'error' event|\n\s+at .+\(.+:\d+:\d+\)/.test(child.stderr()),
      embeddedPostgresLeftRunning: orphan !== undefined,
      stderrTail: child.stderr().slice(0, 600),
    }).toEqual({ stackTrace: false, embeddedPostgresLeftRunning: false, stderrTail: expect.any(String) });
  });
});
