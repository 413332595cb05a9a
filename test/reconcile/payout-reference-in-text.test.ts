import { describe, expect, it } from 'vitest';
import { streamPayoutsReport } from '../../src/reports/payouts.js';
import { importStatement } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { findings, MERCHANT_IBAN, pass, payoutEvent, PROVIDER_IBAN } from '../statements/fixtures.js';
import { Writable } from 'node:stream';

/**
 * A bank that puts the payout's reference after other id-like words in the remittance text, with
 * no end-to-end id: the import's own reference for the line is the first id-like word (an invoice
 * number), and the payout must still be matched by the reference where it stands.
 */
function statement(rows: { ref: string; cents: string; remittance: string }[]): Buffer {
  const head = 'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban';
  const lines = rows.map((r) => [r.ref, '2026-03-03', '2026-03-03', r.cents, 'EUR', 'CRDT', 'Provider', PROVIDER_IBAN, '', `"${r.remittance}"`, MERCHANT_IBAN].join(','));
  return Buffer.from(`${[head, ...lines].join('\r\n')}\r\n`);
}

let d: TestDatabase;
useTestDatabase('payout_ref_in_text', (database) => (d = database));

async function payoutsReport(): Promise<Record<string, string>[]> {
  let text = '';
  const sink = new Writable({ write: (chunk, _e, done) => { text += chunk.toString(); done(); } });
  await streamPayoutsReport(d, { environment: 'sandbox' }, 'json', sink);
  return JSON.parse(text) as Record<string, string>[];
}

describe('a payout reference inside the remittance text, after other id-like words', () => {
  it('matches the payout (no credit without payout, no amount mismatch, not missing) and keeps what the bank sent', async () => {
    const uuid = await payoutEvent(d, { sepa: 'PO2026112200000013', cents: 250_000n, eventTime: '2026-03-02T06:00:00.000000000Z' });
    const result = await importStatement(d, 'sandbox', statement([
      { ref: 'T1', cents: '2500.00', remittance: 'Rechnung RE2026000001 Auszahlung PO2026112200000013' },
      { ref: 'T2', cents: '10.00', remittance: 'Rechnung RE2026000002 Auszahlung PO2026112200000099' },
    ]), 'remittance.csv');
    expect(result.linesRead).toBe(2);
    await pass(d, new Date('2026-03-09T12:00:00Z'), { pattern: '^PO[0-9]{16}$' });
    expect(await findings(d, 'payout_amount_mismatch')).toEqual([]);
    expect(await findings(d, 'payout_not_on_statement')).toEqual([]);
    // The second line carries no known payout: flagged, naming the payout-like word, not the invoice number.
    expect(await findings(d, 'statement_credit_without_payout')).toEqual([
      { entity_id: 'T2', subject: '', status: 'open', expected: null, observed: '1000', sepa_reference: 'PO2026112200000099' },
    ]);
    const [stored] = await d.sql<{ remittance: string }[]>`select remittance from statement_lines where bank_reference = 'T1'`;
    expect(stored?.remittance).toBe('Rechnung RE2026000001 Auszahlung PO2026112200000013');
    const report = await payoutsReport();
    expect(report.find((r) => r.payout_uuid === uuid)?.matched_bank_line).toBe('T1 2026-03-03');
  });
});
