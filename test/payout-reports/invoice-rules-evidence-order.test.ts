import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { acknowledgeDiscrepancy } from '../../src/reconcile/ack.js';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, importCsv, invoiceEvent, OTHER_IBAN, pass, payoutEvent } from './fixtures.js';

/**
 * Invoice-to-cash rules on evidence whose order or naming is not the obvious one:
 * - buyer_paid_merchant_directly names a line's finding by its rank among every credit line sharing
 *   its entry reference, so another account's line with that reference renames nothing (and loses
 *   no acknowledgement);
 * - payout_pays_canceled_invoice orders factoring decisions and the payout on one clock, our
 *   receipt (factoring payloads carry no event_time);
 * - invoice_not_paid_out judges an approved invoice whose invoice webhooks are missing, and takes a
 *   decision over a factoring/pending that arrived after it by a retry.
 */
const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

/** A CSV statement (the project's own column names) of one credit to `account`. */
function oneCredit(p: { entry: string; date: string; cents: bigint; reference: string; account: string; iban: string }): Buffer {
  const head = 'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban';
  const amount = `${p.cents / 100n}.${String(p.cents % 100n).padStart(2, '0')}`;
  const row = [p.entry, p.date, p.date, amount, 'EUR', 'CRDT', 'Buyer GmbH', p.iban, p.reference, `Rechnung ${p.reference}`, p.account].join(',');
  return Buffer.from(`${head}\r\n${row}\r\n`);
}

describe('buyer_paid_merchant_directly: a finding keeps its entity while its evidence stands', () => {
  it('does not resolve (and lose the acknowledgement of) a direct payment when another account books a line with the same entry reference', async () => {
    const d = await createTestDatabase('i2c_buyer_rename');
    await invoiceEvent(d, { ref: 'INV-000501', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-000502', eventTime: day(1) });
    await importStatement(d, 'sandbox', oneCredit({ entry: 'E100', date: '2026-03-03', cents: 11_900n, reference: 'INV-000501', account: 'DE44500105175407324931', iban: OTHER_IBAN }), 'a.csv');
    await pass(d, at(4));
    const [first] = await findings(d, 'buyer_paid_merchant_directly');
    expect(first).toMatchObject({ entity_id: 'E100', subject: 'INV-000501', status: 'open' });
    const [row] = await d.sql<{ id: number }[]>`select id::int from discrepancies where kind = 'buyer_paid_merchant_directly'`;
    expect((await acknowledgeDiscrepancy(d, row!.id, 'told the provider on 2026-03-04', 'accountant')).outcome).toBe('acknowledged');

    // Another account's statement whose bank reuses the entry reference E100 for another buyer's payment.
    await importStatement(d, 'sandbox', oneCredit({ entry: 'E100', date: '2026-03-05', cents: 5_000n, reference: 'INV-000502', account: 'DE89370400440532013000', iban: 'DE75512108001245126199' }), 'b.csv');
    await pass(d, at(6));
    // Nothing changed about the first credit: its finding stays acknowledged, under the same entity.
    const [again] = await d.sql<{ status: string; entity_id: string }[]>`select status::text, entity_id from discrepancies where id = ${row!.id}`;
    expect(again).toEqual({ status: 'acknowledged', entity_id: 'E100' });
  });
});

describe('payout_pays_canceled_invoice: a factoring decision in flight when the payout happened', () => {
  it('does not flag a declined-then-approved invoice as declined when the approval reached us before the payout webhook', async () => {
    const d = await createTestDatabase('i2c_declined_in_flight');
    await invoiceEvent(d, { ref: 'INV-7', eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-7', topic: 'factoring/declined', receivedAt: day(1, '07:00:00') });
    // Manual review overturned the decline: the approval arrives 2 s after the payout's event_time
    // (a delivery's transit, or the two clocks apart), yet 10 s before the payout webhook itself.
    await factoringEvent(d, { ref: 'INV-7', topic: 'factoring/approved', receivedAt: '2026-03-03T06:00:02Z' });
    await payoutEvent(d, { sepa: 'PO2026030300000077', cents: 9_000n, eventTime: day(3), receivedAt: '2026-03-03T06:00:12Z', invoices: ['INV-7'] });
    await pass(d, at(4));
    expect(await findings(d, 'payout_pays_canceled_invoice')).toEqual([]);
  });
});

describe('invoice_not_paid_out: a factored invoice whose invoice webhooks the ledger lacks', () => {
  it('flags an invoice factoring/approved names (with its invoice uuid) that no payout lists after INVOICE_PAYOUT_DAYS', async () => {
    const d = await createTestDatabase('i2c_factored_no_invoice_event');
    // INV-1 has its invoice/created; INV-2's was lost, but factoring/approved names it and its uuid.
    await invoiceEvent(d, { ref: 'INV-1', eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-2', receivedAt: day(1), cents: 20_000n });
    await d.sql`update factoring_events set invoice_uuid = ${randomUUID()} where invoice_external_reference_id = 'INV-2'`;
    await payoutEvent(d, { sepa: 'PO2026030300000001', cents: 9_000n, eventTime: day(3), invoices: ['INV-1'] });
    await pass(d, at(12));
    // The CONTRACT: "an invoice factored (or created) and not canceled that no completed payout lists after INVOICE_PAYOUT_DAYS".
    const f = await findings(d, 'invoice_not_paid_out');
    expect(f.map((x) => x.expected)).toEqual(['20000']);
  });
});

describe('invoice_not_paid_out: a late factoring/pending delivered after the approval', () => {
  it('still flags an approved invoice no payout lists when the manual-review event sent before the approval arrives after it (retry)', async () => {
    const d = await createTestDatabase('i2c_late_pending');
    const inv = await invoiceEvent(d, { ref: 'INV-9', eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-9', topic: 'factoring/approved', receivedAt: '2026-03-01T06:00:00Z', cents: 30_000n });
    // factoring/pending (manual_review) was sent first; its first delivery failed and the retry came 20 minutes later.
    await factoringEvent(d, { ref: 'INV-9', topic: 'factoring/pending', receivedAt: '2026-03-01T06:20:00Z', cents: 30_000n });
    await pass(d, at(12));
    expect((await findings(d, 'invoice_not_paid_out')).map((x) => [x.entity_id, x.expected])).toEqual([[inv, '30000']]);
  });
});
