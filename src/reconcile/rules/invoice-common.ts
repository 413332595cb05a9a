import type { TransactionSql } from 'postgres';
import { DEFAULT_INVOICE_PAYOUT_DAYS } from '../../config/schema.js';
import type { InvoiceRuleSettings, RuleParams } from '../types.js';
import { latestPayouts } from './payout-common.js';
import { invoiceFacts as ledgerInvoiceFacts } from '../../ledger/invoices.js';

/** INVOICE_PAYOUT_DAYS' default (config/schema.ts says why); no contract terms: deductions not judged. */
export const DEFAULT_INVOICE_SETTINGS: InvoiceRuleSettings = { payoutDays: DEFAULT_INVOICE_PAYOUT_DAYS, terms: null };

export function invoiceSettings(p: RuleParams): InvoiceRuleSettings {
  return p.invoice ?? DEFAULT_INVOICE_SETTINGS;
}

/**
 * Each invoice with its reference, order, creation and cancellation (ledger/invoices.ts). Like the
 * payout rules, the invoice rules look at every invoice in each pass (no incremental scope): their
 * evidence changes with time (a deadline days after factoring) and with payouts, which name
 * invoices, not orders.
 */
export function invoiceFacts(tx: TransactionSql, p: RuleParams) {
  return ledgerInvoiceFacts(tx, p.environment);
}

/**
 * Every invoice reference each payout lists (trimmed; blanks ignored), with the payout's latest
 * status, SEPA reference and anchor (payout-common.ts latestPayouts).
 */
export function payoutListings(tx: TransactionSql, p: RuleParams) {
  return tx`
    select distinct l.payout_uuid, l.status, l.sepa_instruction_id, l.sepa_key, l.amount_cents, l.anchor, trim(r.ref) as ref
    from (${latestPayouts(tx, p)}) l
    cross join lateral unnest(l.external_reference_ids) as r(ref)
    where trim(r.ref) <> ''`;
}
