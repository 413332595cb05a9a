import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
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
 * (it takes no stop signal; it gives up only at PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS, 120 s), so
 * the stop reaches SHUTDOWN_TIMEOUT_MS. Before, the receiver was stopped after the jobs and kept
 * acknowledging deliveries until the forced exit; the deadline's log named it as not stopped.
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

describe('SIGTERM while a job cannot stop', () => {
  it('stops the receiver first: a delivery sent during the stop is not acknowledged, and the receiver is not among the components left', { timeout: 60_000 }, async () => {
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
          LOG_LEVEL: 'info',
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

      child.child.kill('SIGTERM');
      await sleep(500);
      const during = await postDelivery(url, JSON.stringify(samplePayload('order/confirmed', 2))).then((r) => r.status, () => 'no connection' as const);
      const exit = await Promise.race([child.exited, sleep(SHUTDOWN_TIMEOUT_MS + 10_000).then(() => 'hung' as const)]);

      expect(during, 'a delivery sent 0.5 s into the stop was acknowledged: the receiver still accepted').not.toBe(200);
      const deadline = child.logs().find((l) => l.msg === 'shutdown deadline passed; some components did not stop');
      // The import waits for nothing but the lock: that stop is the payout inbox's to bound.
      expect(deadline?.notStopped).toContain('payout report inbox');
      expect(deadline?.notStopped).not.toContain('receiver');
      expect(exit).not.toBe('hung');
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries`;
      expect(stored?.n).toBe(1);
    } finally {
      await held`rollback`.catch(() => undefined);
      held.release();
    }
  });
});
