import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from 'postgres';
import { loadConfig } from '../../src/config/load.js';
import { createSqlClient } from '../../src/db/database.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { startProxy, type Proxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';
import { csvStatement } from '../statements/fixtures.js';

/**
 * The statement inbox when the ledger stops answering in the middle of an import (a primary frozen,
 * or failed over leaving the import process's connection half-open: test/helpers/tcp-proxy.ts
 * blackhole). Nothing is wrong with the file: the rules (docs/operating.md, statements/inbox.ts)
 * say only a file's own fault sends it to failed/, and a database that cannot be reached leaves
 * the file in the inbox for the next scan.
 */
let db: TestDatabase;
let proxy: Proxy;
let root: string;
let admin: Sql;
beforeAll(async () => {
  db = await createTestDatabase('inbox_ledger_stalled');
  proxy = await startProxy(new URL(db.url));
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-inbox-ledger-stalled-'));
  admin = createSqlClient(db.url, { poolMax: 2 });
});
afterAll(async () => {
  await admin.end({ timeout: 1 });
  await proxy.close();
  await rm(root, { recursive: true, force: true });
});

describe('statement inbox: the ledger stops answering mid-import', () => {
  it('leaves a good statement in the inbox (deferred), not in failed/ blamed for the database', async () => {
    const config = loadConfig({ RECON_DATA_DIR: root, PROVIDER_ENV: 'sandbox', DATABASE_URL: proxy.url, STATEMENT_IMPORT_TIMEOUT_SECONDS: '3' });
    const inboxDir = path.join(root, 'inbox');
    await mkdir(inboxDir, { recursive: true });
    const file = path.join(inboxDir, 'march.csv');
    await writeFile(file, csvStatement([{ ref: '1', date: '2026-03-02', cents: 12_34n, sepa: 'PO2026030200000001' }]));
    const old = new Date(Date.now() - 60_000);
    await utimes(file, old, old);

    // Hold the import inside its transaction (a lock on bank_statements, as a migration or an
    // operator's statement would) so the import process is mid-import when the ledger goes silent.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = admin.begin(async (tx) => {
      await tx`lock table bank_statements in access exclusive mode`;
      locked();
      await held;
    });
    await isLocked;

    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 0 });
    try {
      await waitFor('the import process to wait inside its transaction', async () => {
        const [row] = await admin<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = ${db.name} and application_name = 'bnpl-recon statement import' and wait_event_type = 'Lock'`;
        return row!.n > 0 ? true : undefined;
      }, 15_000, 50);
      // The ledger stops answering the import process (its connection half-open); the lock goes.
      proxy.blackhole();
      letGo();
      await holder;
      // The old primary's side of that session is gone too (its transaction rolled back, its locks
      // with it): the import process never hears of it, as with a real half-open connection.
      await waitFor('the import\'s session to get past the lock on the server', async () => {
        const rows = await admin<{ pid: number; state: string; wait: string | null }[]>`
          select pid, state, wait_event_type as wait from pg_stat_activity
          where datname = ${db.name} and application_name = 'bnpl-recon statement import'`;
        return rows.length > 0 && rows.every((r) => r.wait !== 'Lock') ? rows : undefined;
      }, 10_000, 50);
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${db.name} and application_name = 'bnpl-recon statement import'`;

      // Queued behind the start scan (the one the silent ledger held up); the ledger answers new
      // connections again, so a file left in the inbox is imported by this scan.
      await inbox.runNow();
      const failedDir = path.join(inboxDir, 'failed');
      const failed = await readdir(failedDir);
      const reasons = await Promise.all(failed.filter((f) => f.endsWith('.error')).map((f) => readFile(path.join(failedDir, f), 'utf8')));
      const kept = [...(await readdir(inboxDir)), ...(await readdir(path.join(inboxDir, 'imported')))].filter((f) => f.startsWith('march'));
      expect(
        { failed, reasons, kept },
        'a statement whose import the silent ledger held up must stay in the inbox for the next scan (and be imported by it), not be moved to failed/ as the file\'s fault',
      ).toEqual({ failed: [], reasons: [], kept: ['march.csv'] });
    } finally {
      await shutdown.run('test');
    }
  }, 30_000);

  it('leaves a statement in the inbox while a lock another session holds keeps its import past the time limit, and imports it once the lock goes', async () => {
    const dataDir = path.join(root, 'locked');
    const config = loadConfig({ RECON_DATA_DIR: dataDir, PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url, STATEMENT_IMPORT_TIMEOUT_SECONDS: '2' });
    const inboxDir = path.join(dataDir, 'inbox');
    await mkdir(inboxDir, { recursive: true });
    const file = path.join(inboxDir, 'april.csv');
    await writeFile(file, csvStatement([{ ref: '2', date: '2026-04-02', cents: 56_78n, sepa: 'PO2026040200000001' }]));
    const old = new Date(Date.now() - 60_000);
    await utimes(file, old, old);
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = admin.begin(async (tx) => {
      await tx`lock table bank_statements in access exclusive mode`;
      locked();
      await held;
    });
    await isLocked;
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 0 });
    try {
      // The start scan's import waits on the lock past its 2 s: the server is on its statement. A
      // scan asked for while one runs is queued behind it; the start scan's result is not returned,
      // so ask until a scan has seen the file, or the file has left the inbox (then the start scan
      // moved it, which the expectations below then say).
      const first = await waitFor('a scan past the time limit', async () => {
        const r = await inbox.runNow();
        if (r.deferred.length + r.failed.length + r.imported.length > 0) return r;
        const failed: string[] = await readdir(path.join(inboxDir, 'failed')).catch(() => []);
        return failed.includes('april.csv') ? { ...r, failed: [{ file: 'april.csv', error: 'moved to failed/ by the start scan' }] } : undefined;
      }, 20_000, 200);
      expect(first.failed, 'the file blamed for a lock it waited on').toEqual([]);
      expect(first.deferred).toEqual(['april.csv']);
      expect(await readdir(inboxDir)).toContain('april.csv');
      letGo();
      await holder;
      const second = await inbox.runNow();
      expect(second.failed).toEqual([]);
      expect(second.imported).toHaveLength(1);
      expect(await readdir(path.join(inboxDir, 'imported'))).toContain('april.csv');
    } finally {
      letGo();
      await shutdown.run('test');
    }
  }, 30_000);
});
