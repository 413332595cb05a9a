import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runReparse, type ReparseSummary } from '../../src/reparse/run.js';
import { silentLogger } from '../../src/log/logger.js';
import { classifyDelivery, eventKey, type StorableClassification } from '../../src/webhooks/classify.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { PARSER_VERSION } from '../../src/webhooks/parser-version.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { postDelivery, startTestReceiver } from '../helpers/receiver.js';
import { pass } from '../statements/fixtures.js';
import { derivedFields, typedSnapshot } from './old-deliveries.js';

/**
 * Parser version 1 stored parsed what version 2 refuses or reads otherwise (parser-version.ts): a
 * year-0000 event_time (event-time.ts) and numbers in a JSON list of references read through a
 * double (reference-list.ts: 1.50 became "1.5"). Its typed rows must not outlive `ledger reparse
 * --status all`: the ledger afterwards is what the current receiver makes of the same bytes.
 */
const ORDER = '6f1c2a9e-8d44-4b1e-9a0e-3b1f2c3d4e51';
const INVOICE = '7a2b3c4d-1111-4222-8333-444455556666';
const PAYOUT = '00000000-0000-4000-8000-000000000031';
const order = (state: string, time: string) =>
  `{"topic":"order/${state}","order_uuid":"${ORDER}","order_state":"${state}","external_reference_id":"ORD-1","event_time":"${time}","buyer":{"uuid":null,"name":"Acme GmbH","legal_form":"GmbH"}}`;
const invoice = (time: string) =>
  `{"topic":"invoice/created","invoice_uuid":"${INVOICE}","order_uuid":"${ORDER}","external_reference_id":"INV-1","event_time":"${time}","gross_amount_cents":"11900","amount_cents":"10000"}`;
const YEAR_0000 = '0000-03-01T06:00:00.000000000Z';

const orderYear0 = order('authorized', YEAR_0000);
const invoiceYear0 = invoice(YEAR_0000);
const payoutDecimalReference = `{"topic":"payout/complete","payout_uuid":"${PAYOUT}","sepa_instruction_id":"PO2026030200000031","amount_cents":"10000","external_reference_ids":"[1.50, \\"INV-1\\"]","event_time":"2026-03-02T06:00:00.000000000Z"}`;
const orderConfirmed = order('confirmed', '2026-03-01T07:00:00.000000000Z');

/** What parser 1 made of a year-0000 body: the year-0001 body's classification, with year 0000 in its time, key and typed row. */
function parser1Year0(body: string): StorableClassification {
  const c = classifyDelivery(Buffer.from(body.replace(YEAR_0000, YEAR_0000.replace(/^0000/, '0001'))));
  if (!c.ok || c.status !== 'parsed') throw new Error(`fixture does not parse: ${body}`);
  const raw = YEAR_0000;
  const eventTime = { raw, sortable: raw, date: new Date(Date.UTC(0, 2, 1, 6)) };
  const values = { ...c.event.typed.values, event_time: raw, event_time_sortable: raw };
  return { ...c, event: { ...c.event, key: eventKey(c.topic, c.event.entityId, eventTime, Buffer.from(body)), eventTime, typed: { ...c.event.typed, values } } };
}

/** What parser 1 made of the payout: the references as a double spells them. */
function parser1Payout(): StorableClassification {
  const c = classifyDelivery(Buffer.from(payoutDecimalReference));
  if (!c.ok || c.status !== 'parsed') throw new Error('fixture does not parse');
  expect(c.event.typed.values.external_reference_ids).toEqual(['1.50', 'INV-1']);
  return { ...c, event: { ...c.event, typed: { ...c.event.typed, values: { ...c.event.typed.values, external_reference_ids: ['1.5', 'INV-1'] } } } };
}

/** Stores each body through the receiver's own writer with parser 1's classification, then records parser_version 1 as that release did. */
async function storeAsParser1(d: TestDatabase, deliveries: { body: string; classification: StorableClassification }[]): Promise<void> {
  for (const { body, classification } of deliveries) {
    const [written] = await writeDeliveries(d.sql, [{
      deliveryUuid: randomUUID(), environment: 'sandbox', receivedAt: new Date(), sourceIp: null,
      headers: { 'content-type': 'application/json' }, rawBody: Buffer.from(body), keyFingerprint: null, classification,
    }]);
    await d.sql`update webhook_deliveries set parser_version = 1 where id = ${written!.deliveryId}`;
  }
}

const ok = (body: string): StorableClassification => {
  const c = classifyDelivery(Buffer.from(body));
  if (!c.ok) throw new Error('fixture is not JSON');
  return c;
};

/** Parser 1's ledger: the year-0000 order (and its retry) and invoice applied with typed rows, the payout with "1.5", a current order event. */
const PARSER_1 = () => [
  { body: orderYear0, classification: parser1Year0(orderYear0) },
  { body: orderYear0, classification: parser1Year0(orderYear0) },
  { body: invoiceYear0, classification: parser1Year0(invoiceYear0) },
  { body: payoutDecimalReference, classification: parser1Payout() },
  { body: orderConfirmed, classification: ok(orderConfirmed) },
];

const reparse = (d: TestDatabase, options: Partial<Parameters<typeof runReparse>[1]> = {}): Promise<ReparseSummary> =>
  runReparse({ database: d, log: silentLogger(), ...testMetrics(d) }, { environment: 'sandbox', status: 'all', dryRun: false, trigger: 'command', ...options });

const count = async (d: TestDatabase, table: string) => (await d.sql.unsafe<{ n: number }[]>(`select count(*)::int as n from ${table}`))[0]!.n;

describe('ledger reparse --status all of deliveries parser 1 applied', () => {
  it('removes the typed rows the current parser does not give, and rewrites those it gives otherwise', { timeout: 60_000 }, async () => {
    const old = await createTestDatabase('reparse_stale_old');
    const reference = await createTestDatabase('reparse_stale_reference');
    await storeAsParser1(old, PARSER_1());
    // As parser 1 left it: both year-0000 events applied with their typed rows.
    expect(await count(old, 'order_events')).toBe(2);
    expect(await count(old, 'invoice_events')).toBe(1);
    expect((await old.sql`select count(*)::int as n from webhook_deliveries where applied`)[0]!.n).toBe(4);
    // The same bytes through this release's receiver: what reparse must arrive at.
    const receiver = await startTestReceiver(reference);
    try {
      for (const { body } of PARSER_1()) expect((await postDelivery(receiver.url, body)).status).toBe(200);
    } finally {
      await receiver.close();
    }

    const dry = await reparse(old, { dryRun: true });
    expect(await count(old, 'order_events')).toBe(2);

    const summary = await reparse(old);
    const typed = await typedSnapshot(old);
    expect(typed.order_events!.map((row) => JSON.parse(row).order_state)).toEqual(['confirmed']);
    expect(typed.invoice_events).toEqual([]);
    expect(typed.payout_events!.map((row) => JSON.parse(row).external_reference_ids)).toEqual([['1.50', 'INV-1']]);
    expect(typed).toEqual(await typedSnapshot(reference));
    expect(await derivedFields(old)).toEqual(await derivedFields(reference));
    // The year-0000 deliveries are invalid_shape now; the payout keeps its key and decision, and its
    // typed row written anew counts it applied (a change: the next pass is full, reconcile/scope.ts).
    expect(summary.outcomes).toEqual({ applied: 1, duplicate: 0, still_unparsed: 0, now_unparsed: 3, unchanged: 1 });
    expect(dry.outcomes).toEqual(summary.outcomes);
    // No claim names an event no delivery is applied for.
    const [claims] = await old.sql`
      select count(*)::int as claims, (select count(*)::int from webhook_deliveries where applied) as applied from webhook_applied_events`;
    expect(claims).toEqual({ claims: 2, applied: 2 });
    expect((await old.sql`select distinct parser_version as v from webhook_deliveries`).map((r) => r.v)).toEqual([PARSER_VERSION]);

    // The rules read no year-0000 time any more: a pass completes.
    expect((await pass(old, new Date(), { full: true })).skipped).toBe(false);

    // A second run finds nothing to change and removes nothing.
    const again = await reparse(old);
    expect(again).toMatchObject({ changed: 0 });
    expect(await typedSnapshot(old)).toEqual(typed);
  });
});
