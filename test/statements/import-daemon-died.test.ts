import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { csvStatement } from '../statements/fixtures.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The daemon process ends without its Shutdown running (killed: the kernel's OOM killer, kill -9;
 * or a crash). Its import process, which nobody times any more, must not go on with the file and
 * hold the environment's import lock for as long as the file's work takes.
 */
let db: TestDatabase;
let root: string;
let orphan: number | undefined;
const ISOLATED = fileURLToPath(new URL('../../src/statements/isolated-import.ts', import.meta.url));
beforeAll(async () => {
  db = await createTestDatabase('import_daemon_died');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-import-daemon-died-'));
  // The file's own work takes long (as a hostile or huge file's does).
  await db.sql.unsafe(`
    create function slow_insert() returns trigger language plpgsql as $$ begin perform pg_sleep(20); return new; end $$;
    create trigger slow_insert before insert on bank_statements for each row execute function slow_insert();`);
});
afterAll(async () => {
  if (orphan !== undefined) {
    try {
      process.kill(orphan, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await db.sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${db.name} and application_name = 'bnpl-recon statement import'`;
  await rm(root, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the daemon process dies while a statement import runs', () => {
  it('its import process does not go on without it', async () => {
    const file = path.join(root, 'slow.csv');
    await writeFile(file, csvStatement([{ ref: 'OR-1', date: '2026-05-04', cents: 7_00n, sepa: 'PO2026050400000974' }]));
    const script = path.join(root, 'daemon.mts');
    await writeFile(script, `
      import { execFileSync } from 'node:child_process';
      const { importInChildProcess } = await import(${JSON.stringify(ISOLATED)});
      void importInChildProcess(
        { databaseUrl: ${JSON.stringify(db.url)}, environment: 'sandbox', file: ${JSON.stringify(file)}, name: 'slow.csv', maxFileBytes: 1 << 20, maxAmountCents: '1000000000000', acceptUnbalanced: false },
        { maxMemoryMb: 256, timeoutMs: 600_000 },
      ).catch(() => undefined);
      let said = false;
      setInterval(() => {
        const forked = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)]).toString().split('\\n').filter((l) => l.includes('import-child')).map((l) => l.trim().split(/\\s+/)[0]);
        if (forked.length > 0 && !said) {
          said = true;
          process.stdout.write('child ' + forked[0] + '\\n');
        }
      }, 200).unref?.();
      setInterval(() => undefined, 1_000);
    `);
    const daemon = spawn(process.execPath, ['--import', 'tsx', script], { cwd: path.resolve(ISOLATED, '../../..'), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    daemon.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    daemon.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<void>((resolve) => daemon.on('exit', () => resolve()));
    // The import process is at the file's work (its statement in the server), then the daemon dies.
    await waitFor('the import at its work', async () => {
      const [row] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where datname = ${db.name} and application_name = 'bnpl-recon statement import' and wait_event = 'PgSleep'`;
      return row!.n > 0 && /child (\d+)/.test(out) ? true : undefined;
    }, 30_000, 100);
    orphan = Number(/child (\d+)/.exec(out)![1]);
    daemon.kill('SIGKILL');
    await exited;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const still = alive(orphan) ? execFileSync('ps', ['-o', 'pid=,ppid=,args=', '-p', String(orphan)]).toString().trim() : '';
    expect(still, 'an import process left running, untimed, after its daemon died').toBe('');
  }, 60_000);
});
