import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A signal after the command returned, while the process exits, ends it with the command's status
 * (CONTRACT.md knows 0, 1 and 2; killed by the signal it was 143), through the entry every shipped
 * way of running the daemon uses: bin/bnpl-recon.js (ops/systemd ExecStart, the Dockerfile's
 * ENTRYPOINT, bnpl-recon-cli.sh, npx).
 *
 * Here bin/bnpl-recon.js runs as shipped, from a copy whose dist/src is the current sources (each
 * entry of src/ linked in; cli.js re-exports src/cli.ts; run under tsx). A preload keeps the process
 * alive for a while after the command returned, as a socket still closing does; the command is
 * `--version` (status 0); SIGTERM is sent once it printed.
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const root = mkdtempSync(path.join(tmpdir(), 'bnpl-bin-signal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function layout(): string {
  mkdirSync(path.join(root, 'bin'));
  mkdirSync(path.join(root, 'dist/src'), { recursive: true });
  copyFileSync(path.join(REPO, 'bin/bnpl-recon.js'), path.join(root, 'bin/bnpl-recon.js'));
  copyFileSync(path.join(REPO, 'package.json'), path.join(root, 'package.json'));
  for (const entry of readdirSync(path.join(REPO, 'src'))) {
    if (entry === 'cli.ts') continue;
    symlinkSync(path.join(REPO, 'src', entry), path.join(root, 'dist/src', entry));
  }
  writeFileSync(path.join(root, 'dist/src/cli.js'), `export * from ${JSON.stringify(path.join(REPO, 'src/cli.ts'))};\n`);
  const linger = path.join(root, 'linger.mjs');
  writeFileSync(linger, 'setTimeout(() => undefined, 20_000);\n');
  return linger;
}

describe('the shipped entry (bin/bnpl-recon.js): a SIGTERM after the command returned', () => {
  it('ends the process with the command\'s status (0), not killed by the signal', async () => {
    const linger = layout();
    const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--import', linger, path.join(root, 'bin/bnpl-recon.js'), '--version'], {
        cwd: REPO,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let sent = false;
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (!sent && out.includes('bnpl-recon ')) {
          sent = true;
          // Well after main() returned (it returns right after printing).
          setTimeout(() => child.kill('SIGTERM'), 500);
        }
      });
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (code, signal) => resolve({ code, signal, out }));
    });
    expect(ended.out, 'precondition: the command ran').toMatch(/bnpl-recon \S+ \(commit/);
    expect({ code: ended.code, signal: ended.signal }).toEqual({ code: 0, signal: null });
  }, 60_000);
});
