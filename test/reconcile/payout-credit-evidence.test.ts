import { describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { importStatement } from '../../src/statements/import.js';
import { acknowledgeDiscrepancy } from '../../src/reconcile/ack.js';
import { findings, MERCHANT_IBAN, OTHER_IBAN, pass, payoutEvent, PROVIDER_IBAN } from '../statements/fixtures.js';

/**
 * Payout rules on what a bank credit proves: a blank payout reference names no credit, and a
 * statement_credit_without_payout keeps its entity (and so its acknowledgement) when a later line
 * shares its bank entry reference.
 */

/** A CSV in the project's own columns, rows given cell by cell (the account last). */
const csv = (account: string, rows: string[][]) => Buffer.from(`${[
  'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban',
  ...rows.map((r) => [...r, account].join(',')),
].join('\r\n')}\r\n`);

const T = (day: number, time = '06:00:00') => `2026-03-${String(day).padStart(2, '0')}T${time}.000000000Z`;
const at = (day: number, time = '12:00:00') => new Date(`2026-03-${String(day).padStart(2, '0')}T${time}Z`);

async function db(label: string): Promise<TestDatabase> {
  return createTestDatabase(`payout_evidence_${label}`);
}

describe('a payout without a SEPA reference', () => {
  it('is not "credited" by an unrelated customer transfer whose text ends in a full stop', async () => {
    const d = await db('empty_ref');
    // A payout cancelled before any SEPA instruction was made: the provider sends an empty reference.
    await payoutEvent(d, { sepa: '', cents: 100_000n, eventTime: T(2), status: 'cancelled' });
    // A tenant's rent, from another IBAN, with no reference at all.
    await importStatement(d, 'sandbox', csv(MERCHANT_IBAN, [['B1', '2026-03-03', '2026-03-03', '50.00', 'EUR', 'CRDT', 'Tenant', OTHER_IBAN, '', 'Miete Maerz.']]), 'rent.csv');
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect(await findings(d, 'payout_cancelled_but_credited')).toEqual([]);
  });
});

describe('statement_credit_without_payout and an acknowledgement', () => {
  it('keeps an acknowledged finding acknowledged when another account books a credit with the same bank entry reference', async () => {
    const d = await db('same_ref');
    await importStatement(d, 'sandbox', csv(MERCHANT_IBAN, [['X1', '2026-03-03', '2026-03-03', '50.00', 'EUR', 'CRDT', 'Provider', PROVIDER_IBAN, 'PO2026030200000009', 'Test']]), 'a.csv');
    await pass(d, at(4));
    const [open] = await d.sql<{ id: string }[]>`select id from discrepancies where kind = 'statement_credit_without_payout'`;
    await acknowledgeDiscrepancy(d, Number(open!.id), 'provider test transfer, confirmed by phone', 'alice');
    await importStatement(d, 'sandbox', csv(OTHER_IBAN, [['X1', '2026-03-05', '2026-03-05', '70.00', 'EUR', 'CRDT', 'Provider', PROVIDER_IBAN, 'PO2026030200000008', 'Other']]), 'b.csv');
    await pass(d, at(6));
    // The first line keeps its entity (X1); the later one is X1#<id>, so the note stays where it was written.
    const rows = await d.sql<{ id: string; entity_id: string; status: string }[]>`
      select id::text, entity_id, status::text from discrepancies where kind = 'statement_credit_without_payout' order by id`;
    expect(rows.map((r) => [r.id, r.status])).toEqual([[open!.id, 'acknowledged'], [expect.any(String), 'open']]);
    expect(rows[0]!.entity_id).toBe('X1');
    expect(rows[1]!.entity_id).toMatch(/^X1#\d+$/);
  });
});
