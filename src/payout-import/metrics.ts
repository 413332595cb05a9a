import { Gauge, type Registry } from 'prom-client';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { LedgerReads } from '../metrics/ledger-health.js';
import { METRIC_PREFIX } from '../metrics/registry.js';

export interface InvoiceMetrics {
  inTransit: Gauge;
  inTransitCents: Gauge;
  deductionsCents: Gauge<'part' | 'currency'>;
}

const DEDUCTION_PARTS = ['discount', 'fixed_fee', 'vat', 'credit_notes', 'buyer_payments', 'disputes'] as const;

/**
 * Money in transit and what the provider kept back, as the latest reconciliation pass recorded
 * them (reconcile/invoice-totals.ts: reconcile_runs.invoice_totals), read at scrape time with one
 * indexed lookup (a failed read keeps the last values and counts in
 * bnpl_recon_ledger_read_failures_total{source="invoices"}; until a pass recorded them the
 * unlabelled gauges read 0, prom-client's initial value, and the labelled ones are absent):
 * - bnpl_recon_invoices_in_transit / _cents: invoices factored (latest factoring event approved),
 *   not canceled, that no completed payout lists yet, and the sum of their factored amounts;
 * - bnpl_recon_payout_deductions_cents{part,currency}: what completed payouts' imported reports kept
 *   back, by part (discount, fixed_fee, vat on invoice rows; credit_notes, buyer_payments, disputes
 *   as amounts taken off) and by the rows' currency (amounts of two currencies are never added;
 *   zeros in the contract's currency, else EUR, while no report kept anything back). Deductions
 *   the contract does not allow are the open payout_deduction_mismatch findings
 *   (bnpl_recon_discrepancies_open{kind="payout_deduction_mismatch"}).
 * Every replica reports the same values: aggregate with max, never sum.
 */
export function createInvoiceMetrics(registry: Registry, reads: LedgerReads, database: Database, environment: ProviderEnvironment): InvoiceMetrics {
  let ready = false;
  const { sql } = database;
  const refresh = async (): Promise<void> => {
    const rows = await sql<{ totals: { in_transit: number; in_transit_cents: string; kept?: Record<string, Record<string, string>> } }[]>`
      select invoice_totals as totals from reconcile_runs
      where environment = ${environment} and status = 'complete' and invoice_totals is not null
      order by started_at desc, id desc limit 1`;
    const row = rows?.[0]?.totals;
    if (!row || !ready) return;
    inTransit.set(Number(row.in_transit));
    inTransitCents.set(Number(row.in_transit_cents));
    // A currency no longer kept back (its payout cancelled) leaves no stale series. A pass of a
    // release before the currency label recorded one total over every currency: not shown.
    deductionsCents.reset();
    for (const [currency, parts] of Object.entries(row.kept ?? {})) {
      for (const part of DEDUCTION_PARTS) deductionsCents.set({ part, currency }, Number(parts[part]));
    }
  };
  const collectOnce = reads.collector('invoices', refresh);
  const inTransit = new Gauge({
    name: `${METRIC_PREFIX}invoices_in_transit`,
    help: 'Invoices factored, not canceled, that no completed payout lists yet (as the latest reconciliation pass saw them)',
    registers: [registry],
    collect: collectOnce,
  });
  const inTransitCents = new Gauge({
    name: `${METRIC_PREFIX}invoices_in_transit_cents`,
    help: 'Factored amount of the invoices in transit, in cents',
    registers: [registry],
    collect: collectOnce,
  });
  const deductionsCents = new Gauge({
    name: `${METRIC_PREFIX}payout_deductions_cents`,
    help: "What completed payouts' imported reports kept back, in cents (of the currency), by part and currency",
    labelNames: ['part', 'currency'] as const,
    registers: [registry],
    collect: collectOnce,
  });
  ready = true;
  return { inTransit, inTransitCents, deductionsCents };
}
