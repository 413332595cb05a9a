import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createSqlClient } from '../src/db/database.js';
import { serverUrl } from './helpers/database.js';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('the test database isolation (test/helpers/database-isolation.ts, a setup file of every test run)', () => {
  it("drops a passing file's databases and keeps, closed, those of a file whose test or hook failed", { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'database-isolation-'));
    const list = path.join(dir, 'databases.txt');
    const admin = createSqlClient(serverUrl(), { poolMax: 1 });
    let names: string[] = [];
    try {
      const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
      const run = promisify(execFile)(process.execPath, [vitest, 'run', '--config', 'test/fixtures/database-isolation/vitest.config.ts'], {
        cwd: root,
        // The same server as this run (an embedded one's URL is not in the environment otherwise).
        env: { ...process.env, CI: 'true', ISOLATION_LIST: list, TEST_DATABASE_URL: serverUrl() },
      });
      await expect(run).rejects.toMatchObject({ code: 1 });
      const recorded = (await readFile(list, 'utf8')).trim().split('\n').map((line) => line.split(' ') as [string, string]);
      names = recorded.map(([, name]) => name);
      expect(recorded.map(([file]) => file).sort()).toEqual(['fails', 'hook-fails', 'passes', 'passes']);
      const existing = new Set((await admin<{ datname: string }[]>`select datname from pg_database where datname in ${admin(names)}`).map((r) => r.datname));
      for (const [file, name] of recorded) expect({ file, kept: existing.has(name) }).toEqual({ file, kept: file !== 'passes' });
      // What the failed test wrote is there to inspect, and nothing holds the kept databases open.
      const failed = recorded.find(([file]) => file === 'fails')![1];
      const url = new URL(serverUrl());
      url.pathname = `/${failed}`;
      const inspect = createSqlClient(url.toString(), { poolMax: 1 });
      try {
        expect(await inspect`select note from evidence`).toEqual([{ note: 'left for inspection' }]);
      } finally {
        await inspect.end({ timeout: 5 });
      }
      const [sessions] = await admin<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where datname in ${admin(names)}`;
      expect(sessions?.n).toBe(0);
    } finally {
      for (const name of names) await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 5 });
      await rm(dir, { recursive: true, force: true });
    }
  });
});
