import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerHeldImport } from '../../src/statements/daemon-import.js';
import { ImportCrashedError, importInChildProcess } from '../../src/statements/isolated-import.js';
import { isTransientDatabaseError } from '../../src/db/errors.js';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { csvStatement } from '../statements/fixtures.js';

let db: TestDatabase;
let root: string;
let server: Server | undefined;
let daemonPool: Database | undefined;
const sockets = new Set<Socket>();

/** The daemon's own pool reaches the ledger over a link that answers `delayMs` late (a busy pooler, a distant ledger). */
async function slowAnsweringUrl(target: URL, delayMs: number): Promise<string> {
  server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => void setTimeout(() => client.write(chunk), delayMs));
    client.on('error', () => undefined).on('close', () => upstream.destroy());
    upstream.on('error', () => undefined).on('close', () => setTimeout(() => client.destroy(), delayMs));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return url.toString();
}
beforeAll(async () => {
  db = await createTestDatabase('import_own_work_terminated');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-import-own-work-'));
  // The import's own statement takes long (as a large file's does): active, no lock wait.
  await db.sql.unsafe(`
    create function slow_insert() returns trigger language plpgsql as $$ begin perform pg_sleep(30); return new; end $$;
    create trigger slow_insert before insert on bank_statements for each row execute function slow_insert();`);
});
afterAll(async () => {
  await daemonPool?.close();
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await rm(root, { recursive: true, force: true });
});

describe('an import whose own statement runs past the time limit', () => {
  it('is blamed on the file (ImportCrashedError), not answered as a database outage because ledgerHeldImport ended its backend first', async () => {
    const file = path.join(root, 'slow.csv');
    await writeFile(file, csvStatement([{ ref: 'SL-1', date: '2026-05-04', cents: 7_00n, sepa: 'PO2026050400000973' }]));
    daemonPool = databaseOver(createSqlClient(await slowAnsweringUrl(new URL(db.url), 1_000), { poolMax: 2 }));
    const pool = daemonPool;
    const outcome = await importInChildProcess(
      { databaseUrl: db.url, environment: 'sandbox', file, name: 'slow.csv', maxFileBytes: 1 << 20, maxAmountCents: '1000000000000', acceptUnbalanced: false },
      { maxMemoryMb: 256, timeoutMs: 2_000, ledgerHeld: (pid) => ledgerHeldImport(pool, pid) },
    ).catch((e: unknown) => e);
    const e = outcome as Error & { code?: string };
    // An outage (transient) leaves the file in the inbox and it is retried at every scan, running
    // the whole limit each time and holding the scan (and every file behind it) that long.
    expect(`${outcome instanceof ImportCrashedError ? 'ImportCrashedError' : 'other'} transient=${isTransientDatabaseError(outcome)} code=${e.code}: ${e.message}`)
      .toMatch(/^ImportCrashedError transient=false code=undefined: import did not finish within 2000 ms: stopped$/);
  }, 60_000);
});
