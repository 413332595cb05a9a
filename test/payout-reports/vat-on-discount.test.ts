import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { importPayoutReport } from '../../src/payout-import/import.js';
import { readPayoutReport } from '../../src/payout-reports/read.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import type { DeductionTerms } from '../../src/reconcile/types.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';

/**
 * Review (spec conformance), provider-merchant-docs.md "The payout report":
 *   | Discount        | the fee in money   |
 *   | VAT on Discount | VAT on the fee     |
 *   | Transaction Fee | the fixed per-order fee charged on this document |
 * and the deductions list: "the provider's fee on each invoice (MDR) ..., a fixed transaction fee per
 * order ..., VAT on the fee". The column the provider fills is VAT on the Discount. A row written that
 * way (VAT = 19 % x Discount, fixed fee separate) is what the documents describe; bnpl-recon's rule
 * (deductions.ts judgeRow, VAT = (Discount + Transaction Fee) x VAT %) reports it as a
 * payout_deduction_mismatch, a finding the documents do not prove.
 */
let database: TestDatabase;
let receiver: TestReceiver;

beforeAll(async () => {
  database = await createTestDatabase('vat_on_discount');
  receiver = await startTestReceiver(database);
});
afterAll(async () => {
  await receiver?.close();
});

// A contract: 2.5 % MDR for bank transfer at 30 days, 0.30 EUR per order, 19 % VAT.
const TERMS: DeductionTerms = {
  currency: 'EUR',
  mdr: [{ paymentMethod: 'bank_transfer', paymentTermsDays: 30, rateMicros: 25_000 }],
  fixedFeeCents: 30n,
  vatRateMicros: 190_000,
  vatOnFixedFee: null,
};

const ORDER = '3f2b8c1e-6a4d-4e2f-9b7a-1c5d8e9f0a21';
const INVOICE = '9d8c7b6a-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const FACTORING = '2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d';
const PAYOUT = '5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f';

async function deliver(body: string) {
  const r = await postDelivery(receiver.url, body);
  expect(r.status).toBe(200);
  expect(r.body.parse_status).toBe('parsed');
}

/**
 * provider-merchant-docs.md: "Discount: the fee in money", "VAT on Discount: VAT on the fee", the fixed
 * Transaction Fee a column of its own. A row charging VAT on the Discount alone is the documented
 * reading; a contract may charge it on the fixed fee too (CONTRACT_TERMS vat_on_fixed_fee). Not set,
 * either reading is accepted; set, only its own.
 */
describe('VAT on Discount is VAT on the Discount (the fee in money)', () => {
  it('raises no payout_deduction_mismatch for a row whose VAT on Discount is 19 % of its Discount, unless the contract charges VAT on the fixed fee too', async () => {
    await deliver(`{"topic":"invoice/created","invoice_uuid":"${INVOICE}","order_uuid":"${ORDER}","external_reference_id":"RE-1001","event_time":"2026-03-02T09:00:00.000000000Z"}`);
    await deliver(`{"topic":"factoring/approved","factoring_uuid":"${FACTORING}","invoice_external_reference_id":"RE-1001","invoice_uuid":"${INVOICE}","factoring_state":"approved","invoice_amount_cents":"100000","payment_method":"bank_transfer","payment_terms":"30","bank_account":{"account_holder":"P","bank":"B","bic":"DEUTDEFF","iban":"DE89370400440532013000"}}`);
    // 1,000.00 EUR: Discount 2.5 % = 25.00; fixed fee 0.30 (first invoice); VAT on Discount 19 % x 25.00 = 4.75;
    // Total Deductions 30.05; Transfer Amount 969.95.
    await deliver(`{"topic":"payout/complete","payout_uuid":"${PAYOUT}","sepa_instruction_id":"PO-20260304-01","amount_cents":"96995","external_reference_ids":"RE-1001","event_time":"2026-03-04T06:00:00.000000000Z"}`);
    const csv =
      'Order No;Doc No;Doc Type;Transaction Amount;Discount %;MDR %;Transaction Fee;Gross Purchase Price;Discount;VAT on Discount;Transfer Amount;Total Deductions\r\n' +
      'SO-1001;RE-1001;Invoice;1.000,00 €;2,5;2,5;0,30 €;1.000,00 €;25,00 €;4,75 €;969,95 €;30,05 €\r\n';
    const report = await readPayoutReport(Buffer.from(csv, 'utf8'));
    expect(report.rows[0]).toMatchObject({ transactionAmountCents: 100000n, discountCents: 2500n, vatOnDiscountCents: 475n, transactionFeeCents: 30n, transferAmountCents: 96995n });
    const imported = await importPayoutReport(database, 'sandbox', report, { fileName: 'payout.csv' });
    expect(imported.payouts).toEqual([PAYOUT]);

    await runReconcilePass(
      {
        config: { PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: 3600, PAYOUT_SETTLEMENT_DAYS: 3, PAYOUT_SOURCE_IBANS: [], PAYOUT_ACCOUNT_IBANS: [], INVOICE_PAYOUT_DAYS: 7 },
        deductionTerms: TERMS,
        log: silentLogger(),
        database,
        ...testMetrics(database),
      },
      new Date('2026-03-05T12:00:00Z'),
      { full: false },
    );
    const found = await database.sql<{ expected: string; observed: string; details: string }[]>`
      select expected, observed, details from discrepancies where kind = 'payout_deduction_mismatch'`;
    expect(found.map((f) => `${f.expected} / ${f.observed}: ${f.details}`), 'a row that follows the documented columns is reported as a mismatch').toEqual([]);

    // A contract charging VAT on the fixed fee too: 19 % of 25.30 is 4.807 -> 4.81, the row's 4.75 is not.
    await runReconcilePass(
      {
        config: { PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: 3600, PAYOUT_SETTLEMENT_DAYS: 3, PAYOUT_SOURCE_IBANS: [], PAYOUT_ACCOUNT_IBANS: [], INVOICE_PAYOUT_DAYS: 7 },
        deductionTerms: { ...TERMS, vatOnFixedFee: true },
        log: silentLogger(),
        database,
        ...testMetrics(database),
      },
      new Date('2026-03-05T12:05:00Z'),
      { full: true },
    );
    const strict = await database.sql<{ expected: string; observed: string; status: string }[]>`
      select expected, observed, status from discrepancies where kind = 'payout_deduction_mismatch'`;
    expect(strict).toEqual([{ expected: 'vat=481', observed: 'vat=475', status: 'open' }]);
  });
});
