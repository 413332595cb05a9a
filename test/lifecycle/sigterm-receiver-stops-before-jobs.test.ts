import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Sql } from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { cleanEnv, spawnCli, type CliChild } from '../e2e/cli.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase } from '../helpers/database.js';
import { postDelivery, TEST_SECRET } from '../helpers/receiver.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { Loopback, json } from '../poller/loopback-provider.js';
import { payoutEvent } from '../statements/fixtures.js';

/**
 * operating.md: "The first SIGTERM stops accepting, answers 503 to deliveries on open connections,
 * waits for acknowledged deliveries to commit", then stops the jobs. The receiver's stop must not
 * wait for a job's: here the payout report inbox's import waits on a lock held on payout_reports
 * when the signal comes. The receiver is stopped first (before, it was stopped after the jobs and
 * kept acknowledging deliveries until the forced exit), and the import is stopped by the shutdown's
 * signal (its statement cancelled, rolled back, the file left in the inbox for the next start), so
 * the daemon exits 0 within SHUTDOWN_TIMEOUT_MS. Before, the import took no signal and gave up
 * only at PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (120 s): the stop reached the deadline, exit 1,
 * naming 'payout report inbox' as not stopped.
 */
const SHUTDOWN_TIMEOUT_MS = 3000;
const HEADER = 'Order No;Doc No;Doc Type;Transaction Amount;Discount %;MDR %;Transaction Fee;Gross Purchase Price;Discount;VAT on Discount;Transfer Amount;Total Deductions;Payout Reference';
const REPORT = `${HEADER}\r\nORD-1;INV-1;Invoice;1.234,56 €;2,5 %;2,5;0,30 €;1.234,56 €;30,86 €;5,92 €;1.197,48 €;37,08 €;PO0000000000000042\r\n`;

let provider: Loopback | undefined;
let locker: Sql | undefined;
let dataDir: string | undefined;
const children: CliChild[] = [];
afterAll(async () => {
  for (const c of children) c.kill();
  await locker?.end({ timeout: 2 });
  await provider?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('SIGTERM while a payout report import waits on a lock', () => {
  it('stops the receiver first (a delivery sent during the stop is not acknowledged), stops the import (nothing stored, the file left in the inbox) and exits 0 within SHUTDOWN_TIMEOUT_MS', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('lifecycle_receiver_stops_first');
    await payoutEvent(db, { sepa: 'PO0000000000000042', cents: 119748n, invoices: ['INV-1'], eventTime: '2026-03-02T10:00:00Z' });
    dataDir = await mkdtemp(path.join(tmpdir(), 'bnpl-recon-receiver-first-'));
    const report = path.join(dataDir, 'payout-inbox', 'report.csv');
    await mkdir(path.dirname(report), { recursive: true });
    await writeFile(report, REPORT);
    // Settled: the inbox imports it at its first scan, at start.
    const past = new Date(Date.now() - 60_000);
    await utimes(report, past, past);

    locker = createSqlClient(db.url, { poolMax: 1, applicationName: 'receiver-first-test-locker' });
    const held = await locker.reserve();
    try {
      await held`begin`;
      await held`lock table payout_reports in access exclusive mode`;
      // A provider that knows no orders: the daemon needs one to start; it plays no part here.
      provider = new Loopback((_req, res) => json(res, 200, { orders: [] }));
      const providerUrl = await provider.listen();
      const child = spawnCli(
        ['start'],
        cleanEnv({
          DATABASE_URL: db.url,
          RECON_DATA_DIR: dataDir,
          PORT: '0',
          METRICS_PORT: '0',
          HOST: '127.0.0.1',
          // debug: the shutdown logs each component as it stops, in order.
          LOG_LEVEL: 'debug',
          PROVIDER_BASE_URL: providerUrl,
          PROVIDER_API_KEY: 'test-key',
          WEBHOOK_SECRET: TEST_SECRET,
          SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        }),
      );
      children.push(child);
      const running = await child.waitForLog('bnpl-recon running', 30_000);
      const url = `${String(running.url)}/webhooks`;
      expect((await postDelivery(url, JSON.stringify(samplePayload('order/confirmed', 1)))).status).toBe(200);
      await waitFor('the payout report import to wait on the lock', async () => {
        const rows = await db.sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%payout_reports%'`;
        return rows.length > 0 ? true : undefined;
      }, 20_000, 50);

      const signalled = performance.now();
      child.child.kill('SIGTERM');
      await sleep(500);
      const during = await postDelivery(url, JSON.stringify(samplePayload('order/confirmed', 2))).then((r) => r.status, () => 'no connection' as const);
      const exit = await Promise.race([child.exited, sleep(SHUTDOWN_TIMEOUT_MS + 10_000).then(() => 'hung' as const)]);
      const tookMs = performance.now() - signalled;

      expect(during, 'a delivery sent 0.5 s into the stop was acknowledged: the receiver still accepted').not.toBe(200);
      const deadline = child.logs().find((l) => l.msg === 'shutdown deadline passed; some components did not stop');
      // The lock is still held here: only the stop's cancel ended the import.
      expect(deadline, `not stopped at the deadline: ${JSON.stringify(deadline?.notStopped)}`).toBeUndefined();
      expect(exit).toEqual({ code: 0, signal: null });
      expect(tookMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 500);
      const stopped = child.logs().filter((l) => l.msg === 'stopped').map((l) => l.component);
      expect(stopped.indexOf('receiver'), `stopped in this order: ${stopped.join(', ')}`).toBeGreaterThanOrEqual(0);
      expect(stopped.indexOf('receiver')).toBeLessThan(stopped.indexOf('payout report inbox'));
      expect(child.logs().some((l) => l.msg === 'payout report import stopped by shutdown: nothing of the file was stored; retried at the next start')).toBe(true);
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries`;
      expect(stored?.n).toBe(1);
    } finally {
      await held`rollback`.catch(() => undefined);
      held.release();
    }
    // The import rolled back whole and its file waits in the inbox (not moved to failed/) for the next start.
    const [reports] = await db.sql<{ n: number }[]>`select count(*)::int as n from payout_reports`;
    expect(reports?.n).toBe(0);
    expect(await readdir(path.dirname(report))).toContain('report.csv');
    expect(await readdir(path.join(path.dirname(report), 'failed')).catch(() => [])).toEqual([]);
  });
});
