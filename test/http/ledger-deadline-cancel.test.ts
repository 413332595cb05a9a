import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import type { HttpServer } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { sleep } from '../helpers/wait.js';
import { call, insertFinding, startOperatorServer } from './operator-harness.js';

/**
 * http-api.md: an /api read that the ledger does not answer within the deadline is answered 503,
 * and its statement's wait for a lock is given up, so its pool connection comes back. Before, the statement went on
 * waiting (here behind a table lock) with its connection: DB_POOL_MAX such requests left every other
 * user of the pool (the receiver, the reconciliation) waiting for one.
 */
const DEADLINE_MS = 1000;
// The guard answers at the deadline; the server gives up the statement's lock wait 0.5 s later (lock_timeout, ledger-read.ts).
const MARGIN_MS = 2500;
const POOL_MAX = 2;

let db: TestDatabase;
let server: HttpServer;
let locker: Sql;
let id: number;
const logLines: { level: number; msg: string; [k: string]: unknown }[] = [];

beforeAll(async () => {
  db = await createTestDatabase('op_deadline_cancel', { poolMax: POOL_MAX });
  const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(JSON.parse(s) as (typeof logLines)[number]) });
  server = await startOperatorServer(db, {}, log, { ledgerDeadlineMs: DEADLINE_MS });
  // Two connections: one holds the lock (reserved), the other reads pg_stat_activity.
  locker = createSqlClient(db.url, { poolMax: 2, applicationName: 'deadline-test-locker' });
  id = await insertFinding(db, { kind: 'missed_webhook', entity: randomUUID(), ref: 'R-1', expected: 'confirmed' });
});
afterAll(async () => {
  await server?.close();
  await locker?.end({ timeout: 2 });
});

/** Statements of this database waiting for a lock, other than the locker's. */
async function waitingOnLock(): Promise<{ pid: number; query: string }[]> {
  return locker<{ pid: number; query: string }[]>`
    select pid, query from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock' and application_name <> 'deadline-test-locker'`;
}

describe('operator reads past the ledger deadline', () => {
  it('answers 503, cancels the waiting statement within a few seconds, keeps the pool usable, and answers again once the lock is gone', { timeout: 60_000 }, async () => {
    expect((await call(`${server.url}/api/discrepancies?limit=5`)).status).toBe(200);

    const held = await locker.reserve();
    await held`begin`;
    await held`lock table discrepancies in access exclusive mode`;
    try {
      // More requests than the pool has connections: a page, a CSV page, the overview, one finding. Not a
      // whole streamed report: it reads on the pool, keeping its connection until the lock goes
      // (operator-api.ts isStreamed says why; report-outage.test.ts holds its 503).
      const paths = ['/api/discrepancies?limit=5', '/api/discrepancies?format=csv&limit=5', '/api/overview', `/api/discrepancies/${id}`];
      for (const path of paths) {
        const started = performance.now();
        const answer = await call(`${server.url}${path}`);
        const ms = performance.now() - started;
        expect({ path, status: answer.status, text: answer.text }).toEqual({ path, status: 503, text: '{"error":"database unavailable; retry"}' });
        expect(ms, path).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      }
      expect(logLines.filter((l) => /answered 503: the ledger did not answer within 1 s/.test(l.msg))).toHaveLength(paths.length);

      // No statement of the operator API is left waiting on the lock (before the fix: POOL_MAX of them, for as long as the lock was held).
      const givenUpAt = performance.now() + MARGIN_MS;
      let waiting = await waitingOnLock();
      while (waiting.length > 0 && performance.now() < givenUpAt) {
        await sleep(100);
        waiting = await waitingOnLock();
      }
      expect(waiting).toEqual([]);

      // The pool's connections are back: a statement on another table runs at once, lock or not.
      const free = await Promise.race([db.sql`select count(*)::int as n from payout_reports`.then(() => 'ran'), sleep(2000).then(() => 'waited for a pool connection')]);
      expect(free).toBe('ran');
    } finally {
      await held`rollback`;
      held.release();
    }

    for (const path of ['/api/discrepancies?limit=5', '/api/overview', `/api/discrepancies/${id}`]) {
      const answer = await call(`${server.url}${path}`);
      expect(answer.status, `${path}: ${answer.text}`).toBe(200);
    }
  });
});
