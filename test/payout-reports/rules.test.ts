import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  deductionRow, factoringEvent, findings, importCsv, importReport, invoiceEvent, invoiceRow, OTHER_IBAN, pass, payoutEvent, transferOf,
} from './fixtures.js';

// Each describe block uses its own database: the rules look at the whole environment.
async function db(label: string): Promise<TestDatabase> {
  const d = await createTestDatabase(`i2c_rules_${label}`);
  return d;
}

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

describe('invoice_not_paid_out', () => {
  let d: TestDatabase;
  const inv: Record<string, string> = {};
  beforeAll(async () => {
    d = await db('not_paid_out');
    for (const ref of ['A', 'B', 'C', 'D', 'E', 'F', 'G']) inv[ref] = await invoiceEvent(d, { ref: `INV-${ref}`, eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-A', receivedAt: day(1), cents: 10_000n }); // never paid: flagged
    await factoringEvent(d, { ref: 'INV-B', receivedAt: day(1) }); // paid in time
    await factoringEvent(d, { ref: 'INV-C', receivedAt: day(1) }); // only a cancelled payout lists it: flagged
    await factoringEvent(d, { ref: 'INV-D', receivedAt: day(1), topic: 'factoring/declined' }); // not owed
    await factoringEvent(d, { ref: 'INV-E', receivedAt: day(1) });
    await invoiceEvent(d, { uuid: inv.E, ref: 'INV-E', topic: 'invoice/canceled', eventTime: day(2) }); // canceled: not owed
    await factoringEvent(d, { ref: 'INV-F', receivedAt: day(6) }); // factored later: not due on day 9
    // INV-G has no factoring event while others do: not known to be owed.
    await payoutEvent(d, { sepa: 'PO2026030300000001', cents: 1n, eventTime: day(3), invoices: ['INV-B'] });
    await payoutEvent(d, { sepa: 'PO2026030300000002', cents: 1n, eventTime: day(3), invoices: ['INV-C'], status: 'cancelled' });
  });

  it('waits INVOICE_PAYOUT_DAYS from the factoring approval, then flags only owed invoices no completed payout lists', async () => {
    await pass(d, at(7, '05:00:00'));
    expect(await findings(d, 'invoice_not_paid_out')).toEqual([]);
    await pass(d, at(9));
    const f = await findings(d, 'invoice_not_paid_out');
    expect(f.map((x) => x.entity_id).sort()).toEqual([inv.A!, inv.C!].sort());
    expect(f.find((x) => x.entity_id === inv.A)).toMatchObject({ status: 'open', expected: '10000', observed: 'not paid out' });
  });

  it('with no factoring events at all, counts from the invoice creation', async () => {
    const e = await db('not_paid_out_nofactoring');
    const a = await invoiceEvent(e, { ref: 'INV-1', eventTime: day(1) });
    await invoiceEvent(e, { ref: 'INV-2', eventTime: day(5) });
    await pass(e, at(9), { days: 7 });
    expect((await findings(e, 'invoice_not_paid_out')).map((x) => x.entity_id)).toEqual([a]);
  });

  it('resolves when a completed payout lists the invoice', async () => {
    await payoutEvent(d, { sepa: 'PO2026031000000003', cents: 1n, eventTime: day(10), invoices: ['INV-A', 'INV-C'] });
    await pass(d, at(10));
    expect((await findings(d, 'invoice_not_paid_out')).map((x) => x.status)).toEqual(['resolved', 'resolved']);
  });
});

describe('invoice_paid_out_twice', () => {
  let d: TestDatabase;
  let twice: string;
  beforeAll(async () => {
    d = await db('paid_twice');
    twice = await invoiceEvent(d, { ref: 'INV-1', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-2', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-3', eventTime: day(1) });
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 1n, eventTime: day(2), invoices: ['INV-1', 'INV-2', 'INV-3'] });
    await payoutEvent(d, { sepa: 'PO2026030300000002', cents: 1n, eventTime: day(3), invoices: ['INV-1'] }); // INV-1 again: flagged
    await payoutEvent(d, { sepa: 'PO2026030300000003', cents: 1n, eventTime: day(3), invoices: ['INV-2'], status: 'cancelled' }); // cancelled: no
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 1n, eventTime: day(2, '07:00:00'), invoices: ['INV-3'] }); // same SEPA: duplicate_event, no
  });

  it('flags an invoice two completed transfers list; not a cancelled one nor a second uuid of one SEPA reference', async () => {
    await pass(d, at(4));
    expect(await findings(d, 'invoice_paid_out_twice')).toEqual([
      { entity_id: twice, subject: '', status: 'open', expected: '1', observed: '2', sepa_reference: null },
    ]);
  });
});

describe('payout_pays_canceled_invoice', () => {
  let d: TestDatabase;
  let canceled: string;
  let declined: string;
  let payout: string;
  beforeAll(async () => {
    d = await db('pays_canceled');
    canceled = await invoiceEvent(d, { ref: 'INV-1', eventTime: day(1) });
    await invoiceEvent(d, { uuid: canceled, ref: 'INV-1', topic: 'invoice/canceled', eventTime: day(2) }); // before: flagged
    const late = await invoiceEvent(d, { ref: 'INV-2', eventTime: day(1) });
    await invoiceEvent(d, { uuid: late, ref: 'INV-2', topic: 'invoice/canceled', eventTime: day(4) }); // after the payout: no
    declined = await invoiceEvent(d, { ref: 'INV-3', eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-3', topic: 'factoring/declined', receivedAt: day(1) }); // declined before: flagged
    await invoiceEvent(d, { ref: 'INV-4', eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-4', topic: 'factoring/declined', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-4', receivedAt: day(2) }); // declined, then approved before the payout: no
    const cx = await invoiceEvent(d, { ref: 'INV-5', eventTime: day(1) });
    await invoiceEvent(d, { uuid: cx, ref: 'INV-5', topic: 'invoice/canceled', eventTime: day(2) });
    payout = await payoutEvent(d, { sepa: 'PO2026030300000001', cents: 1n, eventTime: day(3), invoices: ['INV-1', 'INV-2', 'INV-3', 'INV-4'] });
    await payoutEvent(d, { sepa: 'PO2026030300000002', cents: 1n, eventTime: day(3), invoices: ['INV-5'], status: 'cancelled' }); // paid nothing
    // The first transfer announced again under another uuid (duplicate_event): INV-1 was paid once, so no second finding.
    await payoutEvent(d, { sepa: 'PO2026030300000001', cents: 1n, eventTime: day(3, '07:00:00'), invoices: ['INV-1', 'INV-3'] });
  });

  it('flags invoices canceled or declined before the completed payout that lists them, with the payout as subject', async () => {
    await pass(d, at(4));
    const f = await findings(d, 'payout_pays_canceled_invoice');
    expect(f.map((x) => [x.entity_id, x.subject, x.expected, x.observed]).sort()).toEqual(
      [[canceled, payout, 'canceled', 'paid out'], [declined, payout, 'declined', 'paid out']].sort(),
    );
  });
});

describe('buyer_paid_merchant_directly', () => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await db('buyer_direct');
    await invoiceEvent(d, { ref: 'INV-000123', eventTime: day(1) });
    await invoiceEvent(d, { ref: 'INV-000124', eventTime: day(1) });
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 50_000n, eventTime: day(2), invoices: ['INV-000124'] });
    await importCsv(d, [
      { ref: 'B1', date: '2026-03-03', cents: 11_900n, sepa: 'inv-000123.', iban: OTHER_IBAN }, // the buyer pays us: flagged
      { ref: 'B2', date: '2026-03-03', cents: 50_000n, sepa: 'PO2026030200000001' }, // payout credit (its text has no invoice)
      { ref: 'B3', date: '2026-03-03', cents: 7_000n, sepa: 'INV-0001234', iban: OTHER_IBAN }, // inside a longer word: no
      { ref: 'B4', date: '2026-03-03', cents: -11_900n, sepa: 'INV-000124', iban: OTHER_IBAN }, // a debit (refund): no
      { ref: 'B5', date: '2026-03-03', cents: 500n, sepa: 'INV-000124', iban: undefined }, // from the provider's IBAN: a payout credit, no
    ]);
  });

  it('flags a non-payout credit naming a known invoice, and none of the near misses', async () => {
    await pass(d, at(4));
    expect(await findings(d, 'buyer_paid_merchant_directly')).toEqual([
      { entity_id: 'B1', subject: 'INV-000123', status: 'open', expected: null, observed: '11900', sepa_reference: null },
    ]);
  });

  it('resolves when a payout report deducts it as a buyer payment', async () => {
    const rows = [invoiceRow({ doc: 'INV-000124', cents: 60_000n }), deductionRow({ doc: 'INV-000123', type: 'buyer_payment', cents: 11_900n })];
    await payoutEvent(d, { sepa: 'PO2026030500000002', cents: transferOf(rows), eventTime: day(5), invoices: ['INV-000124'] });
    await importReport(d, rows.map((r) => ({ ...r, payoutReference: 'PO2026030500000002' })));
    await pass(d, at(6));
    expect((await findings(d, 'buyer_paid_merchant_directly')).map((x) => x.status)).toEqual(['resolved']);
  });
});

describe('payout_report_mismatch', () => {
  let d: TestDatabase;
  let short: string;
  let other: string;
  beforeAll(async () => {
    d = await db('report_mismatch');
    const good = [invoiceRow({ doc: 'INV-1', cents: 10_000n }), deductionRow({ doc: 'CN-1', type: 'credit_note', cents: 500n })];
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: transferOf(good), eventTime: day(2), invoices: ['INV-1'] }); // agrees
    await importReport(d, good.map((r) => ({ ...r, payoutReference: 'PO2026030200000001' })));
    const rows = [invoiceRow({ doc: 'INV-2', cents: 10_000n })];
    short = await payoutEvent(d, { sepa: 'PO2026030200000002', cents: transferOf(rows) + 1n, eventTime: day(2), invoices: ['INV-2'] });
    await importReport(d, rows.map((r) => ({ ...r, payoutReference: 'PO2026030200000002' })));
    const listed = [invoiceRow({ doc: 'INV-3', cents: 10_000n }), invoiceRow({ doc: 'INV-5', cents: 100n, feeCents: 0n })];
    other = await payoutEvent(d, { sepa: 'PO2026030200000003', cents: transferOf(listed), eventTime: day(2), invoices: ['INV-4', 'INV-3'] });
    await importReport(d, listed.map((r) => ({ ...r, payoutReference: 'PO2026030200000003' })));
    await payoutEvent(d, { sepa: 'PO2026030200000004', cents: 1n, eventTime: day(2), invoices: ['INV-9'] }); // no report: nothing to compare
  });

  it('flags a report whose rows do not add up to the payout, or whose invoices differ from the listed ones', async () => {
    await pass(d, at(3));
    const f = await findings(d, 'payout_report_mismatch');
    expect(f.map((x) => [x.entity_id, x.expected === x.observed]).sort()).toEqual([[short, false], [other, true]].sort());
    const [details] = await d.sql<{ details: string }[]>`select details from discrepancies where kind = 'payout_report_mismatch' and entity_id = ${other}`;
    expect(details!.details).toContain('invoices the payout lists and the report does not: INV-4');
    expect(details!.details).toContain('invoices the report pays and the payout does not list: INV-5');
  });
});

describe('payout_deduction_mismatch', () => {
  let d: TestDatabase;
  const inv: Record<string, string> = {};
  const order1 = randomUUID();
  const order2 = randomUUID();
  let p1: string;
  let p2: string;
  beforeAll(async () => {
    d = await db('deduction');
    inv.A = await invoiceEvent(d, { ref: 'INV-A', order: order1, eventTime: day(1) });
    inv.B = await invoiceEvent(d, { ref: 'INV-B', order: order1, eventTime: day(1) });
    inv.C = await invoiceEvent(d, { ref: 'INV-C', order: order2, eventTime: day(1) });
    inv.D = await invoiceEvent(d, { ref: 'INV-D', order: randomUUID(), eventTime: day(1) });
    inv.E = await invoiceEvent(d, { ref: 'INV-E', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-A', receivedAt: day(1) }); // bank_transfer, 30 days: 2.5 %
    await factoringEvent(d, { ref: 'INV-B', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-C', receivedAt: day(1), termsDays: 14 }); // bank_transfer, other terms: 2.9 %
    await factoringEvent(d, { ref: 'INV-D', receivedAt: day(1), method: 'direct_debit' }); // the default entry: 3.0 %
    await factoringEvent(d, { ref: 'INV-E', receivedAt: day(1) });
    const first = [
      invoiceRow({ doc: 'INV-A', order: 'O1', cents: 12_345n }), // exact: 308.625 -> 309, fee 30, VAT 64.41 -> 64
      { ...invoiceRow({ doc: 'INV-C', order: 'O2', cents: 10_050n, rateMicros: 29_000 }), discountCents: 291n, vatOnDiscountCents: 61n }, // 291.45 rounded down, VAT 61.04: fine
      (() => { const r = invoiceRow({ doc: 'INV-D', cents: 10_000n, rateMicros: 32_000 }); return r; })(), // 3.2 % charged, 3.0 % agreed: flagged
      (() => { const r = invoiceRow({ doc: 'INV-E', cents: 10_000n }); return { ...r, transferAmountCents: r.transferAmountCents - 1n }; })(), // transfer off by 1
    ];
    p1 = await payoutEvent(d, { sepa: 'PO2026030200000001', cents: transferOf(first), eventTime: day(2), invoices: ['INV-A', 'INV-C', 'INV-D', 'INV-E'] });
    await importReport(d, first);
    // The order's second invoice, in a later payout, charged the fixed fee again.
    const second = [invoiceRow({ doc: 'INV-B', order: 'O1', cents: 1_000n })];
    p2 = await payoutEvent(d, { sepa: 'PO2026030300000002', cents: transferOf(second), eventTime: day(3), invoices: ['INV-B'] });
    await importReport(d, second);
  });

  it('without CONTRACT_TERMS finds nothing', async () => {
    await pass(d, at(4), { terms: null });
    expect(await findings(d, 'payout_deduction_mismatch')).toEqual([]);
  });

  it('flags a fee over the contract, its MDR % column, a fixed fee charged twice and a transfer that does not add up; accepts rounding either way', async () => {
    await pass(d, at(4));
    const f = await findings(d, 'payout_deduction_mismatch');
    expect(f.map((x) => [x.entity_id, x.subject, x.expected, x.observed]).sort()).toEqual([
      [inv.B, p2, 'fee=0', 'fee=30'],
      // The row's MDR % column states the 3.2 % it charged: that too is not the contract's rate.
      [inv.D, p1, 'discount=300;mdr=3', 'discount=320;mdr=3.2'],
      // 10,000 x 2.5 % = 250, fee 30, VAT 280 x 19 % = 53.2 -> 53: transfer 10,000 - 333 = 9,667
      [inv.E, p1, 'transfer=9667', 'transfer=9666'],
    ].sort());
  });
});

describe('payout_deduction_mismatch in another currency', () => {
  let d: TestDatabase;
  const inv: Record<string, string> = {};
  beforeAll(async () => {
    d = await db('deduction_currency');
    const order = randomUUID();
    inv.F = await invoiceEvent(d, { ref: 'INV-F', order, eventTime: day(1) });
    inv.G = await invoiceEvent(d, { ref: 'INV-G', order, eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-F', receivedAt: day(1) });
    await factoringEvent(d, { ref: 'INV-G', receivedAt: day(1) });
    // The order's first invoice, paid in GBP with 4 % kept and the fixed fee: the EUR contract does not judge it.
    const chf = [{ ...invoiceRow({ doc: 'INV-F', order: 'O9', cents: 10_000n, rateMicros: 40_000 }), currency: 'GBP' as const }];
    await payoutEvent(d, { sepa: 'PO2026030200000011', cents: transferOf(chf), eventTime: day(2), invoices: ['INV-F'] });
    await importReport(d, chf);
    // Its second invoice, in EUR: the first of the order the contract judges, so the fixed fee is due on it.
    const eur = [invoiceRow({ doc: 'INV-G', order: 'O9', cents: 10_000n })];
    await payoutEvent(d, { sepa: 'PO2026030300000012', cents: transferOf(eur), eventTime: day(3), invoices: ['INV-G'] });
    await importReport(d, eur);
  });

  it('leaves a row in another currency unjudged and out of the order\'s fixed fee count', async () => {
    await pass(d, at(4));
    expect(await findings(d, 'payout_deduction_mismatch')).toEqual([]);
  });

  it('still judges EUR rows beside it: an invoice without its fixed fee is flagged', async () => {
    const eur = [invoiceRow({ doc: 'INV-H', order: 'O9', cents: 10_000n, feeCents: 0n })];
    // Received after the previous pass began, as every new event is: a pass recomputes the invoices of those alone.
    inv.H = await invoiceEvent(d, { ref: 'INV-H', order: randomUUID(), eventTime: day(1), receivedAt: day(4, '13:00:00') });
    await factoringEvent(d, { ref: 'INV-H', receivedAt: day(1) });
    const p3 = await payoutEvent(d, { sepa: 'PO2026030400000013', cents: transferOf(eur), eventTime: day(4), invoices: ['INV-H'] });
    await importReport(d, eur);
    await pass(d, at(5));
    const f = await findings(d, 'payout_deduction_mismatch');
    expect(f.map((x) => [x.entity_id, x.subject, x.expected, x.observed])).toEqual([[inv.H, p3, 'fee=30', 'fee=0']]);
  });
});
