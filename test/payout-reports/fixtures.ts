import { createHash, randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database.js';
import { silentLogger } from '../../src/log/logger.js';
import { importPayoutReport } from '../../src/payout-import/import.js';
import type { PayoutReportFile, PayoutReportRow } from '../../src/payout-reports/read.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import type { DeductionTerms, PassSummary } from '../../src/reconcile/types.js';
import { parseEventTime } from '../../src/webhooks/event-time.js';
import { testMetrics } from '../helpers/metrics.js';
import { PROVIDER_IBAN } from '../statements/fixtures.js';

export { findings, importCsv, payoutEvent, PROVIDER_IBAN, OTHER_IBAN } from '../statements/fixtures.js';

/** The spec's example contract: 2.5 % for bank transfer at 30 days, 2.9 % for bank transfer, 3.0 % else, 30 cents per order, 19 % VAT. */
export const TERMS: DeductionTerms = {
  currency: 'EUR',
  mdr: [
    { paymentMethod: 'bank_transfer', paymentTermsDays: 30, rateMicros: 25_000 },
    { paymentMethod: 'bank_transfer', paymentTermsDays: null, rateMicros: 29_000 },
    { paymentMethod: null, paymentTermsDays: null, rateMicros: 30_000 },
  ],
  fixedFeeCents: 30n,
  vatRateMicros: 190_000,
  vatOnFixedFee: null,
};

export function pass(database: Database, now: Date, s: { terms?: DeductionTerms | null; days?: number; full?: boolean } = {}): Promise<PassSummary> {
  return runReconcilePass(
    {
      config: {
        PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: 3600, PAYOUT_SETTLEMENT_DAYS: 3, PAYOUT_SOURCE_IBANS: [PROVIDER_IBAN],
        PAYOUT_ACCOUNT_IBANS: [], INVOICE_PAYOUT_DAYS: s.days ?? 7,
      },
      deductionTerms: s.terms === undefined ? TERMS : s.terms,
      log: silentLogger(),
      database,
      ...testMetrics(database),
    },
    now,
    { full: s.full ?? false },
  );
}

const key = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex');

/** One applied invoice event; returns the invoice uuid. */
export async function invoiceEvent(
  database: Database,
  p: { uuid?: string; ref: string; order?: string; topic?: string; eventTime: string; receivedAt?: string; grossCents?: bigint },
): Promise<string> {
  const uuid = p.uuid ?? randomUUID();
  const topic = p.topic ?? 'invoice/created';
  const et = parseEventTime(p.eventTime)!;
  await database.sql`
    insert into invoice_events (environment, event_key, topic, received_at, invoice_uuid, order_uuid, external_reference_id, event_time, event_time_sortable,
                                gross_amount_cents)
    values ('sandbox', ${key(topic, uuid, et.sortable)}, ${topic}, ${p.receivedAt ?? p.eventTime}::timestamptz, ${uuid}, ${p.order ?? null},
            ${p.ref}, ${p.eventTime}, ${et.sortable}, ${p.grossCents?.toString() ?? null}::bigint)`;
  return uuid;
}

/** One applied factoring event (factoring payloads carry no event_time: only arrival). */
export async function factoringEvent(
  database: Database,
  p: { ref: string; topic?: 'factoring/approved' | 'factoring/declined' | 'factoring/pending'; cents?: bigint; method?: string; termsDays?: number | null; receivedAt: string },
): Promise<void> {
  const topic = p.topic ?? 'factoring/approved';
  const uuid = randomUUID();
  await database.sql`
    insert into factoring_events (environment, event_key, topic, received_at, factoring_uuid, invoice_external_reference_id, factoring_state,
                                  invoice_amount_cents, payment_method, payment_terms_days)
    values ('sandbox', ${key(topic, uuid)}, ${topic}, ${p.receivedAt}::timestamptz, ${uuid}, ${p.ref}, ${topic.slice('factoring/'.length)},
            ${(p.cents ?? 10_000n).toString()}::bigint, ${p.method ?? 'bank_transfer'}, ${p.termsDays === undefined ? 30 : p.termsDays})`;
}

/** Rounds half away from zero: x / d for bigints. */
function div(x: bigint, d: bigint): bigint {
  const q = x / d;
  const r = x % d;
  if (2n * (r < 0n ? -r : r) >= d) return q + (x < 0n ? -1n : 1n);
  return q;
}

/** An invoice row as the spec's arithmetic writes it (I24-SPEC.md, "The arithmetic"). */
export function invoiceRow(p: { doc: string; order?: string; cents: bigint; rateMicros?: number; feeCents?: bigint; vatMicros?: number; line?: number; ref?: string | null }): PayoutReportRow {
  const rate = p.rateMicros ?? 25_000;
  const fee = p.feeCents ?? 30n;
  const discount = div(p.cents * BigInt(rate), 1_000_000n);
  const vat = div((discount + fee) * BigInt(p.vatMicros ?? 190_000), 1_000_000n);
  const total = discount + fee + vat;
  return {
    line: p.line ?? 2, payoutReference: p.ref ?? null, orderNo: p.order ?? null, docNo: p.doc, docType: 'invoice', currency: 'EUR',
    transactionAmountCents: p.cents, discountRateMicros: rate, mdrRateMicros: rate, transactionFeeCents: fee, grossPurchasePriceCents: p.cents,
    discountCents: discount, vatOnDiscountCents: vat, transferAmountCents: p.cents - total, totalDeductionsCents: total,
  };
}

/** A credit note, buyer payment or dispute row: reduces the payout by `cents`. */
export function deductionRow(p: { doc: string; type: 'credit_note' | 'buyer_payment' | 'dispute'; cents: bigint; line?: number; ref?: string | null }): PayoutReportRow {
  return {
    line: p.line ?? 2, payoutReference: p.ref ?? null, orderNo: null, docNo: p.doc, docType: p.type, currency: 'EUR',
    transactionAmountCents: -p.cents, discountRateMicros: null, mdrRateMicros: null, transactionFeeCents: 0n, grossPurchasePriceCents: -p.cents,
    discountCents: 0n, vatOnDiscountCents: 0n, transferAmountCents: -p.cents, totalDeductionsCents: 0n,
  };
}

/** A parsed report of these rows (lines renumbered from 2, under the header), hashed by its content. */
export function reportOf(rows: PayoutReportRow[], salt = ''): PayoutReportFile {
  const numbered = rows.map((r, i) => ({ ...r, line: i + 2 }));
  const sha256 = key(salt, JSON.stringify(numbered, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  return { format: 'csv', sha256, rows: numbered };
}

/** Cents as a spreadsheet writes them with a decimal point: -35n is '-0.35'. */
function amountText(cents: bigint): string {
  const abs = cents < 0n ? -cents : cents;
  return `${cents < 0n ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** A rate in micros of a percent as the percent: 25,000 is '2.5'. */
function rateText(micros: number | null): string {
  if (micros === null) return '';
  const fraction = String(micros % 10_000).padStart(4, '0').replace(/0+$/, '');
  return `${Math.trunc(micros / 10_000)}${fraction ? `.${fraction}` : ''}`;
}

/** RFC 4180: a field holding the separator, a quote or a line break is quoted. */
const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

const DOC_TYPE_TEXT: Record<PayoutReportRow['docType'], string> = { invoice: 'invoice', credit_note: 'credit note', buyer_payment: 'buyer payment', dispute: 'dispute' };

/**
 * These rows as a payout report CSV file as the provider's portal exports it (provider-merchant-docs.md,
 * "The payout report"): the documented columns in their documented order, ',' between cells, a decimal
 * point, CRLF. Payout Reference and Currency (columns bnpl-recon reads, docs/payout-reports.md) are
 * written when a row carries one. A `title` goes on a line above the header, as portals put the period
 * there; it also makes two files of the same rows differ. sim/payout-reports writes the simulator's
 * own payout records, not these rows, hence this writer.
 */
export function reportCsv(rows: PayoutReportRow[], title?: string): string {
  const withReference = rows.some((r) => r.payoutReference !== null);
  const withCurrency = rows.some((r) => r.currency !== null);
  const header = [
    ...(withReference ? ['Payout Reference'] : []),
    'Order No', 'Doc No', 'Doc Type', ...(withCurrency ? ['Currency'] : []), 'Transaction Amount', 'Discount %', 'MDR %', 'Transaction Fee',
    'Gross Purchase Price', 'Discount', 'VAT on Discount', 'Transfer Amount', 'Total Deductions',
  ];
  const lines = rows.map((r) => [
    ...(withReference ? [r.payoutReference ?? ''] : []),
    r.orderNo ?? '', r.docNo, DOC_TYPE_TEXT[r.docType], ...(withCurrency ? [r.currency ?? ''] : []), amountText(r.transactionAmountCents),
    rateText(r.discountRateMicros), rateText(r.mdrRateMicros), amountText(r.transactionFeeCents), amountText(r.grossPurchasePriceCents),
    amountText(r.discountCents), amountText(r.vatOnDiscountCents), amountText(r.transferAmountCents), amountText(r.totalDeductionsCents),
  ]);
  return [...(title === undefined ? [] : [[title]]), header, ...lines].map((cells) => `${cells.map(csvField).join(',')}\r\n`).join('');
}

export const transferOf = (rows: PayoutReportRow[]) => rows.reduce((n, r) => n + r.transferAmountCents, 0n);

export function importReport(database: Database, rows: PayoutReportRow[], salt = '') {
  return importPayoutReport(database, 'sandbox', reportOf(rows, salt), { fileName: `report${salt}.csv` });
}
