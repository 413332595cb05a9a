import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/shutdown/command.ts');

/** Starts the fixture command, sends SIGTERM once it is ready, and reports how it ended. */
function runAndStop(env: Record<string, string>): Promise<{ code: number | null; stoppedAfterMs: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let signalledAt = 0;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready') && signalledAt === 0) {
        signalledAt = Date.now();
        child.kill('SIGTERM');
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stoppedAfterMs: Date.now() - signalledAt, stderr }));
  });
}

describe('the shutdown deadline of every command', () => {
  it('exits 1 once SHUTDOWN_TIMEOUT_MS has passed with a cleanup still hanging, naming it', async () => {
    const { code, stoppedAfterMs, stderr } = await runAndStop({ HANG: '1', SHUTDOWN_TIMEOUT_MS: '800' });
    expect(code).toBe(1);
    expect(stoppedAfterMs).toBeGreaterThanOrEqual(800);
    expect(stoppedAfterMs).toBeLessThan(10_000);
    const line = stderr.split('\n').find((l) => l.includes('shutdown deadline passed'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ deadlineMs: 800, notStopped: expect.arrayContaining(['stuck component']) });
  }, 30_000);

  it('exits 0 when every cleanup finishes in time', async () => {
    const { code, stderr } = await runAndStop({ HANG: '0', SHUTDOWN_TIMEOUT_MS: '800' });
    expect(code).toBe(0);
    expect(stderr).not.toContain('shutdown deadline passed');
  }, 30_000);
});
