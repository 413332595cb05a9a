import { beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from '../e2e/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import type { ReparseSummary } from '../../src/reparse/run.js';
import { storeAsOldParser } from '../reparse/old-deliveries.js';

/**
 * docs/commands.md / `ledger reparse --help`: "--since ISO  only deliveries received at or after
 * this instant". received_at is stored to the microsecond; the instant given to the microsecond
 * must not let in a delivery received before it.
 */
const invoiceCreated = (n: number) =>
  `{"topic":"invoice/created","invoice_uuid":"7a2b3c4d-1111-4222-8333-00000000000${n}","external_reference_id":"INV-${n}","event_time":"2026-03-01T06:00:00.000000000Z"}`;

describe('ledger reparse --since to the microsecond', () => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await createTestDatabase('reparse_since_us');
    // Two deliveries an older parser stored unparsed (unknown topic then), received 0.2562 ms apart.
    await storeAsOldParser(d, [
      { body: invoiceCreated(1), old: { status: 'unknown_topic', topic: 'invoice/created', error: 'unknown topic "invoice/created"' } },
      { body: invoiceCreated(2), old: { status: 'unknown_topic', topic: 'invoice/created', error: 'unknown topic "invoice/created"' } },
    ]);
    const ids = (await d.sql<{ id: string }[]>`select id::text as id from webhook_deliveries order by id`).map((r) => r.id);
    await d.sql`update webhook_deliveries set received_at = '2026-03-02T10:00:00.123200Z' where id = ${ids[0]!}`;
    await d.sql`update webhook_deliveries set received_at = '2026-03-02T10:00:00.123500Z' where id = ${ids[1]!}`;
  });

  it('a delivery received at .123200 is not "at or after" --since …10:00:00.123456Z', async () => {
    const env = cleanEnv({ DATABASE_URL: d.url, LOG_LEVEL: 'warn', PROVIDER_ENV: 'sandbox' });
    const result = await runCli(['ledger', 'reparse', '--since', '2026-03-02T10:00:00.123456Z', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as ReparseSummary;
    // Only the delivery received at .123500 is at or after the instant.
    expect(summary.examined).toBe(1);
    const rows = await d.sql<{ received_at: string; parse_status: string }[]>`
      select to_char(received_at at time zone 'UTC', 'HH24:MI:SS.US') as received_at, parse_status::text as parse_status
      from webhook_deliveries order by received_at`;
    expect(rows).toEqual([
      { received_at: '10:00:00.123200', parse_status: 'unknown_topic' },
      { received_at: '10:00:00.123500', parse_status: 'parsed' },
    ]);
  });
});
