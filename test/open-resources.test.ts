import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { countOpen, describeOpen } from './helpers/open-resources.js';

const root = fileURLToPath(new URL('..', import.meta.url));

interface JsonReport {
  testResults: { name: string; status: string; message: string; assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

describe('the open-resources guard (test/helpers/open-resources.ts, a setup file of every test run)', () => {
  it('counts only the kinds it watches and words what is open', () => {
    const now = countOpen(['TCPServerWrap', 'TCPSocketWrap', 'ProcessWrap'], ['TCPServerWrap', 'TCPSocketWrap', 'TCPSocketWrap', 'Timeout', 'PipeWrap']);
    expect(now).toEqual(new Map([['TCPServerWrap', 1], ['TCPSocketWrap', 2], ['ProcessWrap', 0]]));
    expect(describeOpen(now)).toBe('1 listening TCP server (TCPServerWrap), 2 TCP sockets (TCPSocketWrap)');
    expect(describeOpen(countOpen(['ProcessWrap'], ['Timeout']))).toBe('');
  });

  it('fails a file that leaves a server, a child process or a socket open, and passes one whose hooks close everything', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'open-resources-'));
    const output = path.join(dir, 'report.json');
    try {
      const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
      const run = promisify(execFile)(process.execPath, [vitest, 'run', '--config', 'test/fixtures/open-resources/vitest.config.ts', '--reporter=json', `--outputFile=${output}`], {
        cwd: root,
        env: { ...process.env, CI: 'true' },
      });
      // It must fail: the guard turns the leaks into failed files.
      await expect(run).rejects.toMatchObject({ code: 1 });
      const report = JSON.parse(await readFile(output, 'utf8')) as JsonReport;
      const byFile = new Map(report.testResults.map((file) => [path.basename(file.name), file]));
      const leaks = {
        'server.leak.ts': 'left open after its afterAll hooks: 1 listening TCP server (TCPServerWrap);',
        'process.leak.ts': 'left open after its afterAll hooks: 1 child process (ProcessWrap);',
        // The client's socket and the one the server accepted.
        'socket.leak.ts': 'left open after its afterAll hooks: 2 TCP sockets (TCPSocketWrap);',
      };
      for (const [file, message] of Object.entries(leaks)) {
        const result = byFile.get(file);
        expect(result?.assertionResults.map((test) => test.status), file).toEqual(['passed']);
        expect(result?.status, file).toBe('failed');
        expect(result?.message, file).toContain(message);
      }
      const clean = byFile.get('clean.leak.ts');
      expect(clean?.status).toBe('passed');
      expect(clean?.message).toBe('');
      expect(byFile.size).toBe(4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
