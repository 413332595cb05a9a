import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeEmbeddedLedger } from '../../src/db/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { cleanEnv, REPO_ROOT } from './cli.js';

/**
 * demo's help (demo.ts HELP): "Other settings in the environment are ignored: the demo's provider,
 * ledger and schedules are its own"; CHANGELOG: "`demo` reads only the settings its help names from
 * the environment". A shell set up for the real provider with a setting this batch made fatal
 * (RATE_LIMIT_RPS above 500) must not stop the demo, which ignores it (it exited 2 naming it).
 */
let root: string | undefined;
afterAll(async () => {
  if (root === undefined) return;
  await removeEmbeddedLedger(path.join(root, 'data', 'demo'), silentLogger()).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

describe('demo under a shell with a setting it says it ignores', () => {
  it('is not stopped by RATE_LIMIT_RPS=1000 (exit 2 naming it)', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'demo-ignored-'));
    await chmod(root, 0o755);
    const env = cleanEnv({ PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'warn', RECON_DATA_DIR: path.join(root, 'data'), RATE_LIMIT_RPS: '1000' });
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'demo', '--duration', '3', '--seed', '3'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('exit', (code) => resolve({ code, stderr: err }));
    });
    expect(r.stderr).not.toContain('invalid setting RATE_LIMIT_RPS');
    expect(r.code, r.stderr.slice(-400)).not.toBe(2);
  }, 240_000);
});
