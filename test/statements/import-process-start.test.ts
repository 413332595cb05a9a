import { connect, createServer, type Server, type Socket } from 'node:net';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { ImportLedgerStalledError, importInChildProcess } from '../../src/statements/isolated-import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { csvStatement } from './fixtures.js';

/**
 * An import process that has not started and connected to the ledger has not opened its file: the
 * time that takes (a loaded machine loading the child's modules, a ledger slow to accept) does not
 * count against the import's time limit, and a process that does not get that far is no fault of
 * the file, which stays in the inbox.
 */
let db: TestDatabase;
let root: string;
let silent: Server;
const sockets = new Set<Socket>();
let silentUrl: string;
beforeAll(async () => {
  db = await createTestDatabase('import_process_start');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-import-start-'));
  // Takes the connection and never says a word: the child's connect neither fails nor finishes.
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as { port: number }).port;
  silentUrl = `postgres://postgres@127.0.0.1:${port}/nowhere`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await rm(root, { recursive: true, force: true });
});

describe('an import process that has not connected to the ledger at its time limit', () => {
  it('leaves the statement in the inbox (deferred), not in failed/ blamed for a start it never made', async () => {
    // A 2 s limit: the child's connection gives up after its own 2 s connect timeout, a
    // database error that leaves the file for the next scan; the old rule blamed the file at 2 s.
    const config = loadConfig({ RECON_DATA_DIR: root, PROVIDER_ENV: 'sandbox', DATABASE_URL: silentUrl, STATEMENT_IMPORT_TIMEOUT_SECONDS: '2' });
    const inboxDir = path.join(root, 'inbox');
    await mkdir(inboxDir, { recursive: true });
    const file = path.join(inboxDir, 'may.csv');
    await writeFile(file, csvStatement([{ ref: '5', date: '2026-05-04', cents: 9_99n, sepa: 'PO2026050400000001' }]));
    const old = new Date(Date.now() - 60_000);
    await utimes(file, old, old);
    const shutdown = new Shutdown(silentLogger(), 5000);
    // The pool the daemon asks at the time limit is the real, answering ledger: only the child's
    // own connection hangs, so "ask the server why" cannot find the child's backend.
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 0 });
    try {
      const result = await inbox.runNow();
      const scanned = result.deferred.length + result.failed.length + result.imported.length > 0 ? result : await inbox.runNow();
      expect({ failed: scanned.failed, deferred: scanned.deferred }).toEqual({ failed: [], deferred: ['may.csv'] });
      expect(await readdir(inboxDir)).toContain('may.csv');
      expect(await readdir(path.join(inboxDir, 'failed'))).toEqual([]);
    } finally {
      await shutdown.run('test');
    }
  }, 60_000);

  it('is stopped with ImportLedgerStalledError saying so', async () => {
    const file = path.join(root, 'june.csv');
    await writeFile(file, csvStatement([{ ref: '6', date: '2026-06-01', cents: 1_00n, sepa: 'PO2026060100000001' }]));
    const asked: number[] = [];
    const error = await importInChildProcess(
      { databaseUrl: silentUrl, environment: 'sandbox', file, name: 'june.csv', maxFileBytes: 1 << 20, maxAmountCents: '1000000000000', acceptUnbalanced: false },
      { maxMemoryMb: 256, timeoutMs: 500, startLimitMs: 1_500, ledgerHeld: async (pid) => void asked.push(pid) },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImportLedgerStalledError);
    expect((error as Error).message).toBe('import process did not start and connect to the ledger within 1500 ms: stopped');
    expect(asked, 'no backend to ask about').toEqual([]);
  }, 30_000);

  it('does not count the time the process takes to connect: a slow connection, then a small file, imports within a 1 s limit', async () => {
    // Every connection reaches the ledger only after 1.2 s (a ledger slow to accept, a loaded
    // machine), inside the connection's own 2 s connect timeout (db/database.ts).
    const target = new URL(db.url);
    const slow = createServer((client) => {
      client.pause();
      sockets.add(client);
      setTimeout(() => {
        const upstream = connect(Number(target.port || 5432), target.hostname, () => {
          client.pipe(upstream).on('error', () => undefined);
          upstream.pipe(client).on('error', () => undefined);
          client.resume();
        });
        sockets.add(upstream);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      }, 1_200);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(db.url);
      url.port = String((slow.address() as { port: number }).port);
      const file = path.join(root, 'july.csv');
      await writeFile(file, csvStatement([{ ref: '7', date: '2026-07-01', cents: 2_00n, sepa: 'PO2026070100000001' }]));
      const result = await importInChildProcess(
        { databaseUrl: url.toString(), environment: 'sandbox', file, name: 'july.csv', maxFileBytes: 1 << 20, maxAmountCents: '1000000000000', acceptUnbalanced: false },
        { maxMemoryMb: 256, timeoutMs: 1_000 },
      ).catch((e: unknown) => e);
      expect(result instanceof Error ? result.message : result).toMatchObject({ file: 'july.csv', linesNew: 1 });
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = '7'`;
      expect(stored!.n).toBe(1);
    } finally {
      await new Promise((resolve) => slow.close(resolve));
    }
  }, 30_000);
});
