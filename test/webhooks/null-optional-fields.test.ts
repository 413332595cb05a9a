import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';

/**
 * Payload fields the spec does not mark "always" (only order events carry a Presence column), sent
 * as JSON null. payloads.ts: "Required fields are the ones the spec marks 'always'; everything else
 * is optional or nullable", and the typed columns (payout_events.sepa_instruction_id,
 * invoice_events.external_reference_id) are nullable. Refused, the event was stored invalid_shape
 * with no typed row: a payout/cancelled without a SEPA reference (typed-rows.ts already took a
 * blank one as none) never reached the reconciliation, and its payout stayed complete to the rules.
 */
let database: TestDatabase;
let receiver: TestReceiver;
useTestDatabase('webhook_null_optional_fields', (d) => (database = d));
beforeAll(async () => {
  receiver = await startTestReceiver(database);
});
afterAll(async () => {
  await receiver?.close();
});

const PAYOUT = 'a8098c1a-f86e-41da-bd1a-00112444be1e';
const INVOICE = '6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b';

describe('fields not marked "always" sent as null', () => {
  it('payout/cancelled with sepa_instruction_id null is parsed and gets its payout_events row, as a blank one does', async () => {
    const blank = await postDelivery(receiver.url, `{"topic":"payout/cancelled","payout_uuid":"${PAYOUT}","sepa_instruction_id":"","amount_cents":"100","external_reference_ids":"INV-1","event_time":"2024-05-02T10:15:30.1Z"}`);
    expect(blank.body.parse_status).toBe('parsed');
    const nulled = await postDelivery(receiver.url, `{"topic":"payout/cancelled","payout_uuid":"${PAYOUT}","sepa_instruction_id":null,"amount_cents":"100","external_reference_ids":"INV-1","event_time":"2024-05-02T10:15:31.1Z"}`);
    expect(nulled.status).toBe(200);
    const [d] = await database.sql`select parse_status, parse_error from webhook_deliveries where id = ${nulled.body.delivery_id as number}`;
    expect(d, JSON.stringify(d)).toMatchObject({ parse_status: 'parsed' });
    const rows = await database.sql`select event_time, sepa_instruction_id from payout_events where payout_uuid = ${PAYOUT} order by event_time`;
    expect(rows.map((r) => [r.event_time, r.sepa_instruction_id])).toEqual([
      ['2024-05-02T10:15:30.1Z', null],
      ['2024-05-02T10:15:31.1Z', null],
    ]);
  });

  it('invoice/canceled with external_reference_id null is parsed into invoice_events (the column is nullable)', async () => {
    const r = await postDelivery(receiver.url, `{"topic":"invoice/canceled","invoice_uuid":"${INVOICE}","order_uuid":null,"external_reference_id":null,"event_time":"2024-05-02T10:15:30.1Z"}`);
    expect(r.status).toBe(200);
    const [d] = await database.sql`select parse_status, parse_error from webhook_deliveries where id = ${r.body.delivery_id as number}`;
    expect(d, JSON.stringify(d)).toMatchObject({ parse_status: 'parsed' });
    const [row] = await database.sql`select count(*)::int as n from invoice_events where invoice_uuid = ${INVOICE}`;
    expect(row?.n).toBe(1);
  });
});
