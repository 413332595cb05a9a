import type { DiscrepancyKind, Rule } from '../types.js';
import { duplicateEvent } from './duplicate-event.js';
import { missedWebhook } from './missed-webhook.js';
import { orphanWebhook } from './orphan-webhook.js';
import { payoutAmountMismatch } from './payout-amount-mismatch.js';
import { payoutCancelledButCredited } from './payout-cancelled-but-credited.js';
import { statementCreditWithoutPayout } from './payout-credit-without-payout.js';
import { payoutNotOnStatement } from './payout-not-on-statement.js';
import { payoutUnknownInvoice } from './payout-unknown-invoice.js';
import { stateMismatch } from './state-mismatch.js';
import { buyerPaidMerchantDirectly } from './buyer-paid-merchant-directly.js';
import { invoiceNotPaidOut } from './invoice-not-paid-out.js';
import { invoicePaidOutTwice } from './invoice-paid-out-twice.js';
import { payoutDeductionMismatch } from './payout-deduction-mismatch.js';
import { payoutPaysCanceledInvoice } from './payout-pays-canceled-invoice.js';
import { payoutReportMismatch } from './payout-report-mismatch.js';

/** Every rule of a pass, each deciding one kind (duplicate_delivery is recorded apart: it has no lifecycle). */
export const RULES: readonly Rule[] = [
  missedWebhook, stateMismatch, orphanWebhook, duplicateEvent,
  payoutNotOnStatement, statementCreditWithoutPayout, payoutAmountMismatch, payoutCancelledButCredited, payoutUnknownInvoice,
  invoiceNotPaidOut, invoicePaidOutTwice, payoutPaysCanceledInvoice, buyerPaidMerchantDirectly, payoutDeductionMismatch, payoutReportMismatch,
];

/** The kinds the rules decide: a pass resolves an open one of these that no rule found again. */
export const RULE_KINDS: readonly DiscrepancyKind[] = RULES.map((r) => r.kind);

/** The kinds that follow each invoice to cash (issue 24): invoices, payout reports, buyers paying the merchant. */
export const INVOICE_RULE_KINDS: readonly DiscrepancyKind[] = [
  invoiceNotPaidOut, invoicePaidOutTwice, payoutPaysCanceledInvoice, buyerPaidMerchantDirectly, payoutDeductionMismatch, payoutReportMismatch,
].map((r) => r.kind);

/** The kinds about payouts and bank lines alone (statement reconciliation). */
export const PAYOUT_RULE_KINDS: readonly DiscrepancyKind[] = RULES.filter((r) => !r.entities.includes('order') && !INVOICE_RULE_KINDS.includes(r.kind)).map((r) => r.kind);
