import type { Sql } from 'postgres';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createSqlClient } from '../../src/db/database.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { payoutEvent } from '../statements/fixtures.js';

/**
 * POST /api/payout-reports while the daemon stops (operatorRoutes' `signal`, the shutdown's). The
 * statement upload passes that signal to its import (503 "the daemon is stopping" at once); the
 * inbox's payout import takes it too (import.ts: "otherwise an import behind a lock holds the
 * daemon's stop until PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS, past SHUTDOWN_TIMEOUT_MS"). So does the
 * payout report upload: an import waiting behind a lock is answered 503 as soon as the stop comes.
 */
const IMPORT_TIMEOUT_SECONDS = 15;
const HEADER = 'Order No;Doc No;Doc Type;Transaction Amount;Transaction Fee;Gross Purchase Price;Discount;VAT on Discount;Transfer Amount;Total Deductions;Payout Reference';
const FILE = Buffer.from(`${HEADER}\r\nORD-1;INV-1;invoice;100,00;0,30;100,00;2,90;0,61;96,19;3,81;PO0000000000000077\r\n`);
const TOKEN = 'alice-2e9a6b8f9ae100b959a57a8973c90c31';

let db: TestDatabase;
let server: HttpServer;
let locker: Sql;
const stop = new AbortController();

beforeAll(async () => {
  db = await createTestDatabase('http_payout_upload_stop', { poolMax: 3 });
  const config = loadConfig({ OPERATOR_TOKENS: `alice:${TOKEN}`, PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url, PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS: String(IMPORT_TIMEOUT_SECONDS) });
  server = await startHttpServer({ host: '127.0.0.1', port: 0, log: silentLogger(), name: 'operator', routes: operatorRoutes({ config, database: db, log: silentLogger(), signal: stop.signal }) });
  locker = createSqlClient(db.url, { poolMax: 1, applicationName: 'upload-stop-locker' });
  await payoutEvent(db, { sepa: 'PO0000000000000077', cents: 9619n, invoices: ['INV-1'], eventTime: '2026-03-02T10:00:00Z' });
});
afterAll(async () => {
  await server?.close();
  await locker?.end({ timeout: 2 });
});

describe('a payout report upload waiting behind a lock when the daemon stops', () => {
  it('is stopped by the shutdown signal (answered at once, its statement cancelled), not held until PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS', { timeout: 60_000 }, async () => {
    const held = await locker.reserve();
    await held`begin`;
    await held`lock table payout_reports in access exclusive mode`;
    try {
      const started = performance.now();
      const answer = request(`${server.url}/api/payout-reports?name=report.csv`, {
        method: 'POST', body: FILE, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
      }).then(async (r) => ({ status: r.statusCode, body: await r.body.text(), ms: performance.now() - started }));
      await new Promise((r) => setTimeout(r, 1000));
      stop.abort(new Error('SIGTERM'));
      const got = await answer;
      // Not held until PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (15 s here) answers its own 503.
      expect(got.ms, `${got.status} ${got.body}`).toBeLessThan(5000);
      expect(got.status).toBe(503);
    } finally {
      await held`rollback`;
      held.release();
    }
  });
});
