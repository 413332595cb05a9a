import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import { silentLogger } from '../../src/log/logger.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';

/**
 * Values a parsed delivery puts in the ledger are the ones the ledger and the rules can read back
 * exactly: a time Postgres's timestamptz can hold, references as sent.
 */
let database: TestDatabase;
let receiver: TestReceiver;

beforeAll(async () => {
  database = await createTestDatabase('values_the_ledger_reads');
  receiver = await startTestReceiver(database);
});
afterAll(async () => {
  await receiver?.close();
});

const pass = () =>
  runReconcilePass(
    { config: { PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: 3600 }, log: silentLogger(), database, ...testMetrics(database, 'sandbox') },
    new Date(),
    {},
  );

describe('an event_time in year 0000, which JavaScript reads and timestamptz cannot hold', () => {
  // Stored as parsed, it failed every reconciliation pass ("date/time field value out of range"),
  // since the rules cast event_time_sortable to timestamptz.
  it('is stored invalid_shape naming event_time, and the reconciliation pass still runs', async () => {
    const body = JSON.stringify({ ...samplePayload('payout/complete', 1), event_time: '0000-01-01T00:00:00Z' });
    const answer = await postDelivery(receiver.url, body);
    expect(answer).toMatchObject({ status: 200, body: { parse_status: 'invalid_shape' } });
    const [row] = await database.sql<{ parse_error: string }[]>`select parse_error from webhook_deliveries where id = ${answer.body.delivery_id as number}`;
    expect(row?.parse_error).toMatch(/^event_time: /);
    await expect(pass()).resolves.toBeDefined();
  });

  it('still accepts the first and last instants of four-digit years', async () => {
    for (const [i, time] of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z'].entries()) {
      const answer = await postDelivery(receiver.url, JSON.stringify({ ...samplePayload('order/confirmed', 900 + i), event_time: time }));
      expect(answer.body, time).toMatchObject({ parse_status: 'parsed' });
    }
    await expect(pass()).resolves.toBeDefined();
  });
});

describe('payout references sent as JSON numbers', () => {
  // Read through a double, a 20-digit invoice number lost its last digits and 1.50 became "1.5":
  // the payout named an invoice that does not exist (payout_unknown_invoice), or another one.
  it('are stored with their digits as sent', async () => {
    const payout = '9c8b7a6d-2222-4333-8444-00000000aaaa';
    const body = JSON.stringify({
      ...samplePayload('payout/complete', 1),
      payout_uuid: payout,
      sepa_instruction_id: 'SEPA-NUMBERS',
      external_reference_ids: '[20260000000000000001, 1.50]',
    });
    const answer = await postDelivery(receiver.url, body);
    expect(answer).toMatchObject({ status: 200, body: { parse_status: 'parsed' } });
    const rows = await database.sql<{ external_reference_ids: string[] }[]>`
      select external_reference_ids from payout_events where payout_uuid = ${payout}`;
    expect(rows.map((r) => r.external_reference_ids)).toEqual([['20260000000000000001', '1.50']]);
  });
});
