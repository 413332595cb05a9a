import { describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { importStatement } from '../../src/statements/import.js';
import { payoutsSource } from '../../src/reports/payouts.js';
import { fetchPage } from '../../src/reports/source.js';
import { findings, importCsv, MERCHANT_IBAN, OTHER_IBAN, pass, payoutEvent, PROVIDER_IBAN } from '../statements/fixtures.js';

/**
 * The payout-versus-bank rules on references as providers and banks write them (blanks around one,
 * letter case), a payout's history (complete, cancelled, complete; a cancellation naming no
 * reference) and debits that carry a payout's reference without reversing it. Each test states
 * what docs/how-it-decides.md says the rules decide, on evidence built with the project's
 * fixtures and a real reconciliation pass; each failed before its fix.
 */

const T = (day: number, time = '06:00:00') => `2026-03-${String(day).padStart(2, '0')}T${time}.000000000Z`;
const at = (day: number, time = '12:00:00') => new Date(`2026-03-${String(day).padStart(2, '0')}T${time}Z`);
const db = (label: string): Promise<TestDatabase> => createTestDatabase(`payout_rules_${label}`);

const HEAD = 'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban';
/** A CSV of the merchant account, rows as (ref, date, signed amount, counterparty IBAN, e2e, remittance). */
function csv(rows: [string, string, string, string, string, string][]): Buffer {
  const lines = rows.map(([ref, date, amount, iban, e2e, text]) =>
    [ref, date, date, amount.replace('-', ''), 'EUR', amount.startsWith('-') ? 'DBIT' : 'CRDT', 'Party', iban, e2e, `"${text}"`, MERCHANT_IBAN].join(','));
  return Buffer.from(`${[HEAD, ...lines].join('\r\n')}\r\n`);
}
/** Customer payments on 03-01 and 03-06: the statement covers a 03-02 06:00 payout's whole settlement window. */
const cover: [string, string, string, string, string, string][] = [
  ['C0', '2026-03-01', '1.00', OTHER_IBAN, '', 'Miete'],
  ['C9', '2026-03-06', '2.00', OTHER_IBAN, '', 'Miete'],
];

describe('a payout whose sepa_instruction_id the provider sent with surrounding whitespace', () => {
  // The receiver stores sepa_instruction_id as sent (typed-rows.ts); payout-common.ts compares
  // upper(btrim(...)), payout-credits.ts creditLines only upper(...).
  it('is matched by its bank credit: no statement_credit_without_payout, no payout_not_on_statement', async () => {
    const d = await db('ws');
    await payoutEvent(d, { sepa: 'PO2026030200000001 ', cents: 100_000n, eventTime: T(2) });
    await payoutEvent(d, { sepa: ' PO2026030200000002', cents: 50_000n, eventTime: T(2) });
    await importStatement(d, 'sandbox', csv([
      ...cover,
      ['B1', '2026-03-03', '1000.00', PROVIDER_IBAN, 'PO2026030200000001', 'Auszahlung'],
      // A bank that writes the reference only in its text, after an invoice number.
      ['B2', '2026-03-03', '500.00', PROVIDER_IBAN, '', 'Rechnung RE2026000001 Auszahlung PO2026030200000002'],
    ]), 'ws.csv');
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect.soft(await findings(d, 'statement_credit_without_payout')).toEqual([]);
    expect.soft(await findings(d, 'payout_not_on_statement')).toEqual([]);
    expect(await findings(d, 'payout_amount_mismatch')).toEqual([]);
    await d.drop();
  });
});

describe('two payouts whose SEPA references differ only in letter case', () => {
  // The bank credit is matched upper-case (one credit pays both), so they share one reference.
  it('is a duplicate_event, and report payouts does not show the one credit paying both', async () => {
    const d = await db('case');
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 100_000n, eventTime: T(2) });
    const later = await payoutEvent(d, { sepa: 'po2026030200000001', cents: 100_000n, eventTime: T(2, '07:00:00') });
    await importCsv(d, [{ ref: 'B1', date: '2026-03-03', cents: 100_000n, sepa: 'PO2026030200000001' }]);
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect.soft((await findings(d, 'duplicate_event')).map((f) => f.entity_id)).toEqual([later]);
    const { rows } = await fetchPage(payoutsSource(d, { environment: 'sandbox' }), undefined, 10);
    expect(rows.filter((r) => r.matched_bank_line === 'B1 2026-03-03')).toHaveLength(1);
    await d.drop();
  });
});

describe('a payout that went complete, cancelled, complete', () => {
  // duplicate_event's order shape: "confirmed, pending, confirmed changed twice", no duplicate;
  // payout_cancelled_but_credited: "Resolves if a later payout/complete supersedes the cancellation".
  it('changed to complete twice: no duplicate_event "2 distinct payout/complete events"', async () => {
    const d = await db('ccc');
    const u = '00000000-0000-4000-8000-000000000001';
    await payoutEvent(d, { uuid: u, sepa: 'PO2026030200000001', cents: 100_000n, eventTime: T(2) });
    await payoutEvent(d, { uuid: u, sepa: 'PO2026030200000001', cents: 100_000n, eventTime: T(2, '07:00:00'), status: 'cancelled' });
    await payoutEvent(d, { uuid: u, sepa: 'PO2026030200000001', cents: 100_000n, eventTime: T(2, '08:00:00') });
    await pass(d, at(2, '13:00:00'));
    expect(await findings(d, 'duplicate_event')).toEqual([]);
    await d.drop();
  });
});

describe('a payout cancelled after its credit, the cancellation naming no SEPA reference', () => {
  it('is payout_cancelled_but_credited: its own payout/complete named the reference the credit carries', async () => {
    const d = await db('cancel_blank');
    const u = await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 100_000n, eventTime: T(2) });
    await importCsv(d, [{ ref: 'B1', date: '2026-03-03', cents: 100_000n, sepa: 'PO2026030200000001' }]);
    await pass(d, at(3, '13:00:00'), { accounts: [MERCHANT_IBAN] });
    // payout/cancelled with "sepa_instruction_id": "" (typed-rows.ts stores a blank one as null).
    await d.sql`
      insert into payout_events (environment, event_key, topic, received_at, payout_uuid, status, sepa_instruction_id, amount_cents,
                                 external_reference_ids, event_time, event_time_sortable)
      values ('sandbox', 'cancel-key', 'payout/cancelled', '2026-03-04T06:00:00Z', ${u}, 'cancelled', null, 100000, '{}',
              '2026-03-04T06:00:00.000000000Z', '2026-03-04T06:00:00.000000000Z')`;
    await pass(d, at(4, '13:00:00'), { accounts: [MERCHANT_IBAN] });
    expect((await findings(d, 'payout_cancelled_but_credited')).map((f) => [f.entity_id, f.observed])).toEqual([[u, '100000']]);
    await d.drop();
  });
});

describe('a payout credit the merchant forwards to its own other account, the reference in the text', () => {
  // A debit nets only as "a bank's storno of a credit booked twice, or the merchant's return of a
  // cancelled payout" (how-it-decides.md); a transfer to the merchant's savings is neither.
  it('the bank still credited the payout in full: no payout_amount_mismatch claiming 0 cents', async () => {
    const d = await db('forward');
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 100_000n, eventTime: T(2) });
    await importStatement(d, 'sandbox', csv([
      ...cover,
      ['B1', '2026-03-03', '1000.00', PROVIDER_IBAN, 'PO2026030200000001', 'Auszahlung PO2026030200000001'],
      ['B2', '2026-03-04', '-1000.00', OTHER_IBAN, '', 'Umbuchung Tagesgeld Auszahlung PO2026030200000001'],
    ]), 'forward.csv');
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect(await findings(d, 'payout_amount_mismatch')).toEqual([]);
    await d.drop();
  });
});
