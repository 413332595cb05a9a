import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { importStatement } from '../../src/statements/import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { MERCHANT_IBAN, pass, payoutEvent, PROVIDER_IBAN } from '../statements/fixtures.js';
import { call, startOperatorServer } from './operator-harness.js';

/**
 * http-api.md: GET /api/discrepancies/{id} gives "the evidence: ... bank lines". A bank that writes
 * the payout's SEPA reference only in the remittance text (matched by the rules and by report
 * payouts: ledger/payout-credits.ts) gets a payout_amount_mismatch about that very line, but the
 * evidence view looks the lines up by statement_lines.sepa_reference alone and shows none.
 */
let db: TestDatabase;
let server: HttpServer;
beforeAll(async () => {
  db = await createTestDatabase('op_evidence_lines');
  server = await startOperatorServer(db);
  await payoutEvent(db, { sepa: 'PO2026112200000013', cents: 250_000n, eventTime: '2026-03-02T06:00:00.000000000Z' });
  const head = 'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban';
  const line = ['T1', '2026-03-03', '2026-03-03', '2400.00', 'EUR', 'CRDT', 'Provider', PROVIDER_IBAN, '', '"Rechnung RE2026000001 Auszahlung PO2026112200000013"', MERCHANT_IBAN].join(',');
  // Bookings before and after it, on both accounts payouts were credited to, so the statements
  // cover the payout's settlement window: only then is a credit short of its payout a finding
  // (payout-amount-mismatch.ts).
  const fee = (ref: string, day: string) => [ref, day, day, '-1.00', 'EUR', 'DBIT', 'Bank', '', '', 'Kontofuehrung', MERCHANT_IBAN].join(',');
  await importStatement(db, 'sandbox', Buffer.from(`${head}\r\n${fee('F1', '2026-03-01')}\r\n${line}\r\n${fee('F2', '2026-03-08')}\r\n`), 'remittance.csv');
  // A cancelled payout whose reference a GBP account was credited with anyway.
  await payoutEvent(db, { sepa: 'PO2026112200000021', cents: 5_000n, status: 'cancelled', eventTime: '2026-03-02T07:00:00.000000000Z' });
  const gbp = ['T2', '2026-03-03', '2026-03-03', '50.00', 'GBP', 'CRDT', 'Provider', PROVIDER_IBAN, 'PO2026112200000021', 'Auszahlung PO2026112200000021', 'GB33BUKB20201555555555'].join(',');
  const gbpFee = (ref: string, day: string) => [ref, day, day, '-1.00', 'GBP', 'DBIT', 'Bank', '', '', 'Account fee', 'GB33BUKB20201555555555'].join(',');
  await importStatement(db, 'sandbox', Buffer.from(`${head}\r\n${gbpFee('G1', '2026-03-01')}\r\n${gbp}\r\n${gbpFee('G2', '2026-03-08')}\r\n`), 'gbp.csv');
  await pass(db, new Date('2026-03-09T12:00:00Z'), { pattern: '^PO[0-9]{16}$' });
});
afterAll(async () => {
  await server?.close();
});

describe('evidence of a payout finding', () => {
  it('lists the bank credit the finding is about', async () => {
    const rows = JSON.parse((await call(`${server.url}/api/discrepancies?kind=payout_amount_mismatch`)).text) as { id: number; observed: string }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.observed).toBe('240000');
    const payouts = JSON.parse((await call(`${server.url}/api/payouts`)).text) as Record<string, unknown>[];
    expect(payouts.find((p) => p.sepa_reference === 'PO2026112200000013')).toMatchObject({ matched_bank_line: 'T1 2026-03-03', credited_cents: '240000' });
    const detail = JSON.parse((await call(`${server.url}/api/discrepancies/${rows[0]!.id}`)).text) as { bank_lines: { bank_reference: string }[] };
    expect(detail.bank_lines.map((l) => l.bank_reference), 'the evidence shows no bank line').toEqual(['T1']);
  });
});

describe('report discrepancies: money at stake in the bank line\'s currency', () => {
  it('labels payout_cancelled_but_credited ("the credit") with the credit\'s currency, GBP, not EUR', async () => {
    const [line] = await db.sql<{ currency: string }[]>`select currency from statement_lines where bank_reference = 'T2'`;
    expect(line!.currency).toBe('GBP');
    const rows = JSON.parse((await call(`${server.url}/api/discrepancies?kind=payout_cancelled_but_credited`)).text) as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ amount_cents: '5000', amount: '50.00' });
    // reports.md: "currency the bank line's, else EUR"
    expect(rows[0]!.currency).toBe('GBP');
  });
});
