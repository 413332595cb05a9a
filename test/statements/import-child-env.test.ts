import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
const SECRET_SETTINGS = ['PROVIDER_API_KEY', 'WEBHOOK_SECRET', 'OPERATOR_TOKEN', 'OPERATOR_TOKENS', 'DATABASE_URL'];
import { importChildEnvironment, importInChildProcess } from '../../src/statements/isolated-import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { csvStatement } from './fixtures.js';

/**
 * The inbox's import process gets the database address on its IPC channel and nothing of the
 * daemon's secrets in its environment: read from /proc/PID/environ of the running child.
 */

let db: TestDatabase;
let dir: string;
beforeAll(async () => {
  db = await createTestDatabase('import_child_env');
  dir = await mkdtemp(path.join(tmpdir(), 'bnpl-child-env-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Environments of this process's children running import-child, as they are seen by the kernel. */
async function childEnvironments(): Promise<string[][]> {
  const found: string[][] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      if (!(await readFile(`/proc/${pid}/cmdline`, 'utf8')).includes('import-child')) continue;
      found.push((await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').filter((e) => e !== ''));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('the import process\'s environment', () => {
  it('holds none of the daemon\'s settings or secrets, and the import still works', async () => {
    const planted = { PROVIDER_API_KEY: 'planted-api-key-9f8e7d', OPERATOR_TOKEN: 'planted-operator-token-1a2b3c', WEBHOOK_SECRET: 'planted-webhook-secret-4d5e6f', NODE_OPTIONS: '--max-old-space-size=77' };
    const saved = Object.fromEntries(Object.keys(planted).map((k) => [k, process.env[k]]));
    Object.assign(process.env, planted);
    const file = path.join(dir, 'one.csv');
    await writeFile(file, csvStatement([{ ref: 'E1', date: '2026-03-02', cents: 1_00n, sepa: 'PO2026030200000001' }]));
    const seen: string[][] = [];
    let done = false;
    try {
      const imported = importInChildProcess(
        { databaseUrl: db.url, environment: 'sandbox', file, name: 'one.csv', maxFileBytes: 1 << 20, maxAmountCents: '1000000000000', acceptUnbalanced: false },
        { maxMemoryMb: 256, timeoutMs: 60_000 },
      ).finally(() => (done = true));
      while (!done) {
        seen.push(...(await childEnvironments()));
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await imported).linesNew).toBe(1);
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
    expect(seen.length, 'the running child was observed').toBeGreaterThan(0);
    const names = new Set(seen.flat().map((e) => e.slice(0, e.indexOf('='))));
    for (const name of [...SECRET_SETTINGS, 'NODE_OPTIONS']) expect(names.has(name), name).toBe(false);
    for (const value of Object.values(planted)) expect(seen.flat().join('\n')).not.toContain(value);
  });

  it('keeps only what a Postgres connection and Node read', () => {
    expect(importChildEnvironment({ PGPASSWORD: 'p', PGSSLMODE: 'require', TZ: 'UTC', LANG: 'C.UTF-8', PATH: '/bin', DATABASE_URL: 'postgres://x', PROVIDER_API_KEY: 'k', OPERATOR_TOKENS: 'a:b', RECON_DATA_DIR: '/d', NODE_OPTIONS: '--x' }))
      .toEqual({ PGPASSWORD: 'p', PGSSLMODE: 'require', TZ: 'UTC', LANG: 'C.UTF-8', PATH: '/bin' });
  });
});
