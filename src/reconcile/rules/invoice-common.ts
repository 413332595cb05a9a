import type { TransactionSql } from 'postgres';
import { DEFAULT_INVOICE_PAYOUT_DAYS } from '../../config/schema.js';
import type { InvoiceRuleSettings, RuleParams } from '../types.js';
import { latestPayouts } from './payout-common.js';
import { invoiceFacts } from '../../ledger/invoices.js';
import { stage } from '../stage.js';

/** INVOICE_PAYOUT_DAYS' default (config/schema.ts says why); no contract terms: deductions are not judged. */
export const DEFAULT_INVOICE_SETTINGS: InvoiceRuleSettings = { payoutDays: DEFAULT_INVOICE_PAYOUT_DAYS, terms: null };

export function invoiceSettings(p: RuleParams): InvoiceRuleSettings {
  return p.invoice ?? DEFAULT_INVOICE_SETTINGS;
}

/**
 * The evidence the invoice rules share, staged once per pass as analysed temporary tables dropped
 * at commit (stage.ts). The rules read these tables, not the ledger's, for five sets:
 *  - `pass_payouts`: each payout as its latest event says (payout-common.ts latestPayouts);
 *  - `pass_listings`: every invoice reference each payout lists (trimmed, blanks ignored, once per
 *    payout) with the payout's status, SEPA reference (`sepa_key` upper-case), amount and anchor;
 *  - `pass_invoices`: each invoice with its reference, order, creation, cancellation and gross
 *    amount (ledger/invoices.ts invoiceFacts, the one definition the invoices report also reads);
 *  - `pass_factoring`: each invoice reference's latest factoring event (by arrival: factoring
 *    payloads carry no event_time), its topic, arrival and factored amount;
 *  - `pass_invoice_refs`: every reference any invoice event carries (payout_unknown_invoice).
 * The invoice rules look at every invoice whenever they run (no scope by invoice: their evidence
 * changes with time, a deadline days after factoring, and with payouts, which name invoices, not
 * orders); an incremental pass runs them only when some of that evidence is new (invoice-scope.ts).
 *
 * Why staged: built inside each rule, these sets were rebuilt three to four times a pass, and the
 * planner, estimating 10 completed payouts where 20,000 were (the `distinct on` of latestPayouts),
 * probed the invoices and factoring events one listing at a time. At 1,000,000 orders with their
 * invoices (bench/reconcile, invoice-seed.ts) that made the invoice rules 126 s of a 141 s pass
 * (bench/README.md, reconcile).
 */
export async function stageInvoiceEvidence(tx: TransactionSql, p: RuleParams): Promise<void> {
  await stage(tx, 'pass_payouts', latestPayouts(tx, p));
  // Each payout's references made distinct within the payout (a few dozen each), not as one hash
  // of every listing's seven columns (1.7 s at 1,000,000 listings).
  await stage(tx, 'pass_listings', tx`
    select l.payout_uuid, l.status, l.sepa_instruction_id, l.sepa_key, l.amount_cents, l.anchor, r.ref
    from pass_payouts l
    cross join lateral (
      select distinct trim(x) as ref from unnest(l.external_reference_ids) as x where trim(x) <> ''
    ) r`);
  await stage(tx, 'pass_invoices', invoiceFacts(tx, p.environment));
  // Sorted in the "C" collation, which only decides the order of the groups, not which event each
  // keeps (equality is bytewise in both): 1,000,000 events 0.84 s against 1.37 s in the database's.
  await stage(tx, 'pass_factoring', tx`
    select distinct on (invoice_external_reference_id collate "C") invoice_external_reference_id as ref, topic, received_at, invoice_amount_cents
    from factoring_events
    where environment = ${p.environment} and invoice_external_reference_id is not null
    order by invoice_external_reference_id collate "C", received_at desc, event_key desc`);
  await stage(tx, 'pass_invoice_refs', tx`
    select distinct external_reference_id as ref from invoice_events
    where environment = ${p.environment} and external_reference_id is not null`);
  // No index on pass_invoices: every rule reads it whole or by its few canceled rows, and building
  // one took 0.7 s at 1,000,000 invoices that no plan used (auto_explain of a full pass).
  await tx`create index on pass_payouts (payout_uuid)`;
  await tx`create index on pass_listings (ref)`;
  await tx`create unique index on pass_factoring (ref)`;
  await tx`create unique index on pass_invoice_refs (ref)`;
  // Temporary tables are never analysed by autovacuum: without this the planner guesses their sizes.
  await tx`analyze pass_payouts, pass_listings, pass_invoices, pass_factoring, pass_invoice_refs`;
}
