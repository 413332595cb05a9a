import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { findings, importCsv, invoiceEvent, OTHER_IBAN, pass, payoutEvent } from './fixtures.js';

// Each describe block uses its own database: the rules look at the whole environment.
async function db(label: string): Promise<TestDatabase> {
  const d = await createTestDatabase(`stmt_rules_${label}`);
  return d;
}

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

describe('payout_not_on_statement', () => {
  let d: TestDatabase;
  let missing: string;
  beforeAll(async () => {
    d = await db('not_on_statement');
    missing = await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 100_000n, eventTime: day(2) });
    await payoutEvent(d, { sepa: 'PO2026030200000002', cents: 50_000n, eventTime: day(2) });
    await payoutEvent(d, { sepa: 'PO2026030200000003', cents: 70_000n, eventTime: day(2), status: 'cancelled' });
  });

  it('waits for the statements to cover the whole settlement window, then flags only the uncredited payout', async () => {
    // Covers 03-01 .. 03-04 only: the window of a 03-02 06:00 payout ends 03-05 06:00.
    await importCsv(d, [
      { ref: 'B1', date: '2026-03-01', cents: 1_000n, sepa: 'RF000000000001', iban: OTHER_IBAN },
      { ref: 'B2', date: '2026-03-03', cents: 50_000n, sepa: 'PO2026030200000002' },
      { ref: 'B3', date: '2026-03-04', cents: -2_000n, sepa: 'RF000000000002', iban: OTHER_IBAN },
    ], 'a.csv');
    await pass(d, at(4));
    expect(await findings(d, 'payout_not_on_statement')).toEqual([]); // not due yet
    await pass(d, at(9));
    expect(await findings(d, 'payout_not_on_statement')).toEqual([]); // due, but 03-05 not covered
    await importCsv(d, [{ ref: 'B4', date: '2026-03-05', cents: 3_000n, sepa: 'RF000000000003', iban: OTHER_IBAN }], 'b.csv');
    await pass(d, at(9));
    const f = await findings(d, 'payout_not_on_statement');
    expect(f).toEqual([{ entity_id: missing, subject: '', status: 'open', expected: '100000', observed: null, sepa_reference: 'PO2026030200000001' }]);
  });

  it('resolves when the credit is imported, even booked late', async () => {
    await importCsv(d, [{ ref: 'B5', date: '2026-03-08', cents: 100_000n, sepa: 'po2026030200000001' }], 'c.csv');
    await pass(d, at(10));
    expect((await findings(d, 'payout_not_on_statement')).map((f) => f.status)).toEqual(['resolved']);
  });
});

describe('statement_credit_without_payout', () => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await db('credit_without');
    await payoutEvent(d, { sepa: 'PO2026030200000010', cents: 10_000n, eventTime: day(2) });
    await importCsv(d, [
      { ref: 'C1', date: '2026-03-02', cents: 12_345n, sepa: 'PO2026030200000099' }, // provider, no payout: flagged
      { ref: 'C2', date: '2026-03-02', cents: 10_000n, sepa: 'PO2026030200000010' }, // provider, payout known
      { ref: 'C3', date: '2026-03-02', cents: 5_000n, sepa: 'RF123456789012', iban: OTHER_IBAN }, // customer payment
      { ref: 'C4', date: '2026-03-02', cents: -5_000n, sepa: 'PO2026030200000098' }, // debit to the provider
      { ref: 'C5', date: '2026-03-02', cents: 7_000n, sepa: 'PO2026030200000097', iban: OTHER_IBAN }, // payout-like ref, other IBAN
    ]);
  });

  it('flags a credit from the provider IBAN no payout explains, and nothing else', async () => {
    await pass(d, at(3));
    expect(await findings(d, 'statement_credit_without_payout')).toEqual([
      { entity_id: 'C1', subject: '', status: 'open', expected: null, observed: '12345', sepa_reference: 'PO2026030200000099' },
    ]);
  });

  it('with PAYOUT_REFERENCE_PATTERN, also a payout-like reference from another IBAN', async () => {
    await pass(d, at(3), { pattern: '^PO[0-9]{16}$' });
    expect((await findings(d, 'statement_credit_without_payout')).map((f) => f.entity_id)).toEqual(['C1', 'C5']);
  });

  it('resolves when the payout event arrives', async () => {
    await payoutEvent(d, { sepa: 'PO2026030200000099', cents: 12_345n, eventTime: day(2, '07:00:00') });
    await pass(d, at(3));
    expect((await findings(d, 'statement_credit_without_payout')).map((f) => `${f.entity_id}:${f.status}`)).toEqual(['C1:resolved', 'C5:resolved']);
  });
});

describe('payout_amount_mismatch and payout_cancelled_but_credited', () => {
  let d: TestDatabase;
  let short: string;
  let cancelled: string;
  beforeAll(async () => {
    d = await db('amount_cancelled');
    short = await payoutEvent(d, { sepa: 'PO2026030200000020', cents: 100_000n, eventTime: day(2) });
    await payoutEvent(d, { sepa: 'PO2026030200000021', cents: 80_000n, eventTime: day(2) }); // exact
    cancelled = await payoutEvent(d, { sepa: 'PO2026030200000022', cents: 60_000n, eventTime: day(2), status: 'cancelled' });
    await payoutEvent(d, { sepa: 'PO2026030200000023', cents: 40_000n, eventTime: day(2), status: 'cancelled' }); // no credit
    // A cancelled payout and a completed one sharing a reference: the credit is the completed one's.
    await payoutEvent(d, { sepa: 'PO2026030200000024', cents: 30_000n, eventTime: day(2), status: 'cancelled' });
    await payoutEvent(d, { sepa: 'PO2026030200000024', cents: 30_000n, eventTime: day(2, '06:30:00') });
    // complete, then cancelled: the latest event by event_time decides, whatever the arrival order.
    await payoutEvent(d, { uuid: '00000000-0000-4000-8000-000000000025', sepa: 'PO2026030200000025', cents: 20_000n, eventTime: day(2, '09:00:00'), status: 'cancelled', receivedAt: day(2, '09:00:00') });
    await payoutEvent(d, { uuid: '00000000-0000-4000-8000-000000000025', sepa: 'PO2026030200000025', cents: 20_000n, eventTime: day(2), receivedAt: day(2, '10:00:00') });
    await importCsv(d, [
      { ref: 'D1', date: '2026-03-02', cents: 99_950n, sepa: 'PO2026030200000020' },
      { ref: 'D2', date: '2026-03-02', cents: 80_000n, sepa: 'PO2026030200000021' },
      { ref: 'D3', date: '2026-03-03', cents: 60_000n, sepa: 'PO2026030200000022' },
      { ref: 'D4', date: '2026-03-03', cents: 30_000n, sepa: 'PO2026030200000024' },
      { ref: 'D5', date: '2026-03-03', cents: 20_000n, sepa: 'PO2026030200000025' },
      // A customer's payment on 03-05: the statement reaches the end of the payouts' settlement window (03-05 06:00).
      { ref: 'D9', date: '2026-03-05', cents: 1_000n, sepa: 'RF000000000009', iban: OTHER_IBAN },
    ]);
    await pass(d, at(3));
  });

  it('flags a differing amount with expected and observed in cents once the statements cover its settlement window, and not an exact one', async () => {
    expect(await findings(d, 'payout_amount_mismatch')).toEqual([
      { entity_id: short, subject: '', status: 'open', expected: '100000', observed: '99950', sepa_reference: 'PO2026030200000020' },
    ]);
  });

  it('flags a credited cancelled payout; not an uncredited one, nor one whose reference a completed payout explains', async () => {
    expect((await findings(d, 'payout_cancelled_but_credited')).map((f) => [f.entity_id, f.expected, f.observed])).toEqual([
      ['00000000-0000-4000-8000-000000000025', 'cancelled', '20000'],
      [cancelled, 'cancelled', '60000'],
    ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)));
  });

  it('resolves a mismatch when a second credit completes the amount', async () => {
    await importCsv(d, [{ ref: 'D6', date: '2026-03-04', cents: 50n, sepa: 'PO2026030200000020' }], 'more.csv');
    await pass(d, at(4));
    expect((await findings(d, 'payout_amount_mismatch')).map((f) => f.status)).toEqual(['resolved']);
  });
});

describe('payout_unknown_invoice', () => {
  let d: TestDatabase;
  let payout: string;
  beforeAll(async () => {
    d = await db('unknown_invoice');
    await invoiceEvent(d, 'INV-000001', day(1));
    payout = await payoutEvent(d, { sepa: 'PO2026030200000030', cents: 1n, eventTime: day(2), invoices: ['INV-000001', 'INV-900001', ' '] });
  });

  it('waits the grace period, then flags each unknown reference with the reference as subject', async () => {
    await pass(d, at(2, '06:30:00'));
    expect(await findings(d, 'payout_unknown_invoice')).toEqual([]);
    await pass(d, at(2, '08:00:00'));
    expect(await findings(d, 'payout_unknown_invoice')).toEqual([
      { entity_id: payout, subject: 'INV-900001', status: 'open', expected: null, observed: 'INV-900001', sepa_reference: 'PO2026030200000030' },
    ]);
  });

  it('resolves when the invoice webhook arrives after all', async () => {
    await invoiceEvent(d, 'INV-900001', day(2, '09:00:00'));
    await pass(d, at(2, '10:00:00'));
    expect((await findings(d, 'payout_unknown_invoice')).map((f) => f.status)).toEqual(['resolved']);
  });
});
