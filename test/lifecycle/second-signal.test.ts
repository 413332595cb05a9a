import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/shutdown');

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** from the last signal sent to the exit */
  afterLastSignalMs: number;
}

/**
 * Starts a fixture, and once it printed `ready` sends SIGTERM; `again` decides, from its stderr so
 * far, when to send the next one (true: now), polled every 20 ms.
 */
function signalled(fixture: string, env: Record<string, string>, signals: number, again: (stderr: string) => boolean): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(FIXTURES, fixture)], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let sent = 0;
    let lastAt = 0;
    const send = () => {
      sent += 1;
      lastAt = Date.now();
      child.kill('SIGTERM');
    };
    const poll = setInterval(() => {
      if (sent > 0 && sent < signals && again(stderr)) send();
    }, 20);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready') && sent === 0) send();
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearInterval(poll);
      resolve({ code, signal, stderr, afterLastSignalMs: Date.now() - lastAt });
    });
  });
}

/**
 * CONTRACT.md: "Every command ... exits 0 on success, 2 on bad usage or bad configuration ..., and 1
 * on any other failure." A second SIGTERM during a drain exits at once (docs/operating.md: "A
 * second signal exits at once") with 1, not 143 (128 + the signal number), a status the contract
 * has no place for, which scripts and supervisors relying on {0, 1, 2} (systemd's
 * RestartPreventExitStatus=2, a wrapper checking `== 1`) would not recognise.
 */
describe('signals and exit statuses', () => {
  it('a second SIGTERM while the first drains exits at once with 1 (the drain not finished)', async () => {
    // The drain hangs on a component (HANG=1) for up to the 30 s deadline.
    const ended = await signalled('command.ts', { HANG: '1', SHUTDOWN_TIMEOUT_MS: '30000' }, 2, (stderr) => stderr.includes('"msg":"shutting down"'));
    expect({ code: ended.code, signal: ended.signal }).toEqual({ code: 1, signal: null });
    expect(ended.afterLastSignalMs, 'at once, not at the deadline').toBeLessThan(10_000);
    expect(ended.stderr).toContain('second signal: exiting now, the drain not finished');
  }, 60_000);

  it('a SIGTERM after the command returned, while the process exits, ends it with the status the command set', async () => {
    const ended = await signalled('exiting.ts', {}, 1, () => false);
    expect({ code: ended.code, signal: ended.signal }).toEqual({ code: 1, signal: null });
    expect(ended.afterLastSignalMs, 'at once, not when what it closes is closed').toBeLessThan(10_000);
  }, 60_000);
});
