import { pino } from 'pino';
import type { Sql } from 'postgres';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import type { HttpServer } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { payoutEvent } from '../statements/fixtures.js';
import { TOKEN, startOperatorServer } from './operator-harness.js';

/**
 * http-api.md, POST /api/payout-reports: an import whose statement runs or waits longer than
 * PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (here behind a lock held on a table it writes) is stopped:
 * 503 naming the setting, an error logged, nothing of the file stored, and its pool connection
 * back. Before, the upload waited for as long as the lock was held, with its connection.
 */
const TIMEOUT_SECONDS = 1;
const MARGIN_MS = 3000;
const HEADER = 'Order No;Doc No;Doc Type;Transaction Amount;Discount %;MDR %;Transaction Fee;Gross Purchase Price;Discount;VAT on Discount;Transfer Amount;Total Deductions;Payout Reference';
const FILE = Buffer.from(`${HEADER}\r\nORD-1;INV-1;Invoice;1.234,56 €;2,5 %;2,5;0,30 €;1.234,56 €;30,86 €;5,92 €;1.197,48 €;37,08 €;PO0000000000000042\r\n`);

let db: TestDatabase;
let server: HttpServer;
let locker: Sql;
const logLines: { level: number; msg: string; [k: string]: unknown }[] = [];

beforeAll(async () => {
  db = await createTestDatabase('op_payout_upload_timeout', { poolMax: 2 });
  const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(JSON.parse(s) as (typeof logLines)[number]) });
  server = await startOperatorServer(db, { DATABASE_URL: db.url, PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS) }, log);
  // Two connections: one holds the lock (reserved), the other reads pg_stat_activity and the tables.
  locker = createSqlClient(db.url, { poolMax: 2, applicationName: 'upload-timeout-test-locker' });
  await payoutEvent(db, { sepa: 'PO0000000000000042', cents: 119748n, invoices: ['INV-1'], eventTime: '2026-03-02T10:00:00Z' });
});
afterAll(async () => {
  await server?.close();
  await locker?.end({ timeout: 2 });
});

/** The upload's answer, or 'no answer' after `ms`. */
async function upload(ms: number): Promise<{ status: number | 'no answer'; body: string; ms: number }> {
  const started = performance.now();
  try {
    const response = await request(`${server.url}/api/payout-reports?name=report.csv`, {
      method: 'POST', body: FILE, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' }, signal: AbortSignal.timeout(ms),
    });
    return { status: response.statusCode, body: await response.body.text(), ms: performance.now() - started };
  } catch {
    return { status: 'no answer', body: '', ms: performance.now() - started };
  }
}

describe('payout report upload while a table it writes is locked', () => {
  it('answers 503 naming PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS, logs it, stores nothing, frees its connection, and imports once the lock is gone', { timeout: 60_000 }, async () => {
    const held = await locker.reserve();
    await held`begin`;
    await held`lock table payout_reports in access exclusive mode`;
    try {
      const answer = await upload(TIMEOUT_SECONDS * 1000 + MARGIN_MS);
      expect(answer.status, answer.body).toBe(503);
      expect(answer.ms).toBeLessThan(TIMEOUT_SECONDS * 1000 + MARGIN_MS);
      const { error } = JSON.parse(answer.body) as { error: string };
      expect(error).toMatch(/^report\.csv: the import did not finish: .*PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS \(1 s\).*nothing of the file was stored/);
      expect(logLines.filter((l) => l.level >= 50 && /payout report upload not imported: .*PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS/.test(l.msg))).toHaveLength(1);

      // Nothing of the upload waits on the lock any more.
      const waiting = await locker`select pid, query from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and application_name <> 'upload-timeout-test-locker'`;
      expect(waiting).toEqual([]);
    } finally {
      await held`rollback`;
      held.release();
    }
    const [stored] = await locker<{ reports: number; rows: number }[]>`
      select (select count(*)::int from payout_reports) as reports, (select count(*)::int from payout_report_rows) as rows`;
    expect(stored).toEqual({ reports: 0, rows: 0 });

    const again = await upload(20_000);
    expect(again.status, again.body).toBe(201);
    expect(JSON.parse(again.body)).toMatchObject({ kind: 'payout_report', rows: 1, rows_new: 1 });
  });
});
