import { Gauge, type Registry } from 'prom-client';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { invoiceFacts } from '../ledger/invoices.js';
import type { LedgerReads } from '../metrics/ledger-health.js';
import { METRIC_PREFIX } from '../metrics/registry.js';
import { topic } from '../provider/vocabulary.js';

export interface InvoiceMetrics {
  inTransit: Gauge;
  inTransitCents: Gauge;
  deductionsCents: Gauge<'part'>;
}

const DEDUCTION_PARTS = ['discount', 'fixed_fee', 'vat', 'credit_notes', 'buyer_payments', 'disputes'] as const;

/**
 * Money in transit and what the provider kept back, read from the ledger at scrape time (one
 * statement per scrape; a failed read keeps the last values and counts in
 * bnpl_recon_ledger_read_failures_total{source="invoices"}; absent until the first good read):
 * - bnpl_recon_invoices_in_transit / _cents: invoices factored (latest factoring event approved),
 *   not canceled, that no completed payout lists yet, and the sum of their factored amounts;
 * - bnpl_recon_payout_deductions_cents{part}: what the imported payout reports kept back, by part
 *   (discount, fixed_fee, vat on invoice rows; credit_notes, buyer_payments, disputes as amounts
 *   taken off). Deductions the contract does not allow are the open payout_deduction_mismatch
 *   findings (bnpl_recon_discrepancies_open{kind="payout_deduction_mismatch"}).
 * Every replica reports the same values: aggregate with max, never sum.
 */
export function createInvoiceMetrics(registry: Registry, reads: LedgerReads, database: Database, environment: ProviderEnvironment): InvoiceMetrics {
  let ready = false;
  let pending: Promise<void> | undefined;
  const { sql } = database;
  const refresh = async (): Promise<void> => {
    const rows = await sql<{ n: number; cents: string; discount: string; fixed_fee: string; vat: string; credit_notes: string; buyer_payments: string; disputes: string }[]>`
      with paid as (
        select distinct trim(r.ref) as ref
        from (select distinct on (payout_uuid) status, external_reference_ids from payout_events where environment = ${environment}
              order by payout_uuid, event_time_sortable desc nulls last, received_at desc, event_key desc) l
        cross join lateral unnest(l.external_reference_ids) as r(ref)
        where l.status = 'complete'
      ),
      factored as (
        select distinct on (invoice_external_reference_id) invoice_external_reference_id as ref, topic, invoice_amount_cents
        from factoring_events where environment = ${environment} and invoice_external_reference_id is not null
        order by invoice_external_reference_id, received_at desc, event_key desc
      ),
      transit as (
        select count(*)::int as n, coalesce(sum(f.invoice_amount_cents), 0)::text as cents
        from (${invoiceFacts(sql, environment)}) i join factored f on f.ref = i.ref
        where f.topic = ${topic('factoring/approved')} and i.canceled_at is null and i.ref not in (select ref from paid)
      ),
      kept as (
        select coalesce(sum(discount_cents) filter (where doc_type = 'invoice'), 0)::text as discount,
               coalesce(sum(transaction_fee_cents) filter (where doc_type = 'invoice'), 0)::text as fixed_fee,
               coalesce(sum(vat_on_discount_cents), 0)::text as vat,
               coalesce(-sum(transfer_amount_cents) filter (where doc_type = 'credit_note'), 0)::text as credit_notes,
               coalesce(-sum(transfer_amount_cents) filter (where doc_type = 'buyer_payment'), 0)::text as buyer_payments,
               coalesce(-sum(transfer_amount_cents) filter (where doc_type = 'dispute'), 0)::text as disputes
        from payout_report_rows where environment = ${environment}
      )
      select * from transit, kept`.catch(() => {
      reads.failures.inc({ source: 'invoices' });
      return undefined;
    });
    const row = rows?.[0];
    if (!row || !ready) return;
    inTransit.set(row.n);
    inTransitCents.set(Number(row.cents));
    for (const part of DEDUCTION_PARTS) deductionsCents.set({ part }, Number(row[part]));
  };
  const collectOnce = (): Promise<void> => {
    pending ??= reads.track(refresh()).finally(() => {
      pending = undefined;
    });
    return pending;
  };
  const inTransit = new Gauge({
    name: `${METRIC_PREFIX}invoices_in_transit`,
    help: 'Invoices factored, not canceled, that no completed payout lists yet (read from the ledger at scrape time)',
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
    help: "What the imported payout reports kept back, in cents, by part",
    labelNames: ['part'] as const,
    registers: [registry],
    collect: collectOnce,
  });
  ready = true;
  return { inTransit, inTransitCents, deductionsCents };
}
