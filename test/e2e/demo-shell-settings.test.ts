import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeEmbeddedLedger } from '../../src/db/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { cleanEnv, REPO_ROOT } from './cli.js';

/**
 * `demo` as a developer runs it from a shell configured for their real provider: CONTRACT.md
 * documents WEBHOOK_SIGNATURE_HEADER, so a developer integrating the provider has it set, e.g. to
 * x-acme-signature. The demo runs its own simulator (which signs with its own header) and must
 * still show that nothing is lost: it takes only the settings its help names from the environment
 * (demo.ts DEMO_PASSED_THROUGH). Before, every delivery was refused 401 (or 403 with
 * WEBHOOK_ALLOWED_IPS), nothing was stored, and the demo exited 0. Its exit status follows its
 * final summary: 1 when that calls a difference a defect (CONTRACT.md: exit 1 on any failure).
 */
let root: string;
let result: { code: number | null; stdout: string; stderr: string };
let ipsResult: { code: number | null; stdout: string; stderr: string };

function runDemo(env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'demo', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout: out, stderr: err }));
  });
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'demo-shell-'));
  await chmod(root, 0o755);
  const base = { PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'warn' };
  [result, ipsResult] = await Promise.all([
    // The developer's shell, set up for the real provider (documented settings).
    runDemo(cleanEnv({ ...base, RECON_DATA_DIR: path.join(root, 'data'), WEBHOOK_SIGNATURE_HEADER: 'x-acme-signature' }), ['--duration', '8', '--seed', '3']),
    runDemo(cleanEnv({ ...base, RECON_DATA_DIR: path.join(root, 'data-ips'), WEBHOOK_ALLOWED_IPS: 'spec' }), ['--duration', '8', '--seed', '3']),
  ]);
}, 240_000);

afterAll(async () => {
  await removeEmbeddedLedger(path.join(root, 'data', 'demo'), silentLogger()).catch(() => undefined);
  await removeEmbeddedLedger(path.join(root, 'data-ips', 'demo'), silentLogger()).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

const finalOf = (r: { stdout: string }) => r.stdout.slice(r.stdout.indexOf('\nfinal: '));
/** The final summary's first line: deliveries stored, lost, signatures. */
const headOf = (r: { stdout: string }) => finalOf(r).split('\n').find((l) => l.startsWith('final: ')) ?? '(no final summary)';

describe('demo under a shell that sets WEBHOOK_SIGNATURE_HEADER for the real provider', () => {
  it('stores the simulator\'s correctly signed deliveries (none refused 401)', () => {
    const head = headOf(result);
    expect(head).not.toMatch(/correctly signed deliveries answered 401/);
    expect(Number(/deliveries stored (\d+)/.exec(head)?.[1] ?? '0'), head).toBeGreaterThan(0);
  });

  it('with WEBHOOK_ALLOWED_IPS=spec in the shell, still stores the simulator\'s deliveries (none refused 403)', () => {
    const head = headOf(ipsResult);
    expect(Number(/deliveries stored (\d+)/.exec(head)?.[1] ?? '0'), head).toBeGreaterThan(0);
  });

  it('exits 1 exactly when its final summary names a difference it calls a defect', () => {
    for (const r of [result, ipsResult]) {
      const final = finalOf(r);
      expect(final, r.stderr).toContain('\nfinal: ');
      const calledDefect = final.includes('unexplained by the ground truth (a defect');
      expect({ calledDefect, exitCode: r.code }).toEqual({ calledDefect, exitCode: calledDefect ? 1 : 0 });
    }
  });

  it('names no delivery refused or given up', () => {
    for (const r of [result, ipsResult]) {
      expect(finalOf(r)).not.toMatch(/answered 401|never answered 2xx/);
    }
  });
});
