import type { Env } from './options.js';
import type { BankAccount, BuyerRecord } from './payloads.js';

export type EntityType = 'order' | 'invoice' | 'payout' | 'buyer' | 'applicant' | 'kyc' | 'factoring' | 'billing_configuration';

/** One business event as the provider would emit it, before any fault decides its delivery. */
export interface EmittedEvent {
  env: Env;
  seq: number;
  /** simulated ms */
  at: number;
  topic: string;
  entityType: EntityType;
  entityId: string;
  externalReferenceId: string | null;
  /** the event_time as sent, or null for topics whose payload has none */
  eventTime: string | null;
  payload: Record<string, unknown>;
  /** order events: the state carried and when the order's next transition is planned */
  orderState?: string;
  nextTransitionAt?: number | undefined;
  order?: OrderRecord;
}

export interface OrderRecord {
  uuid: string;
  externalReferenceId: string;
  state: string;
  /** position in the API's listing (creation order); ghosts have none */
  listIndex: number;
  createdAt: number;
  buyer: BuyerRecord;
  amountCents: bigint;
  netTermDays: number;
  asynchronous: boolean;
  bankAccount: BankAccount;
  /** the API lists it, no webhook ever mentions it */
  silent: boolean;
  /** webhooks mention it, the API never lists it */
  ghost: boolean;
  history: { state: string; at: number }[];
  /** invoices planned for the order (a split shipment has two) and how many completed */
  invoiceCount: number;
  completedInvoices: number;
  /** the fixed fee appeared on its first invoice's row in a completed payout's report */
  fixedFeeCharged: boolean;
}

export interface InvoiceRecord {
  uuid: string;
  externalReferenceId: string;
  order: OrderRecord;
  grossCents: bigint;
  createdAt: number;
  factoringState: 'none' | 'manual_review' | 'approved' | 'declined';
  paidOutBy: string | null;
  canceled: boolean;
  /** the factoring events' payment method and terms: the contract's MDR depends on both */
  paymentMethod: string;
  paymentTermsDays: number;
  /** 1 for an order's first invoice, 2 for the second of a split shipment */
  orderInvoiceIndex: number;
  /** when factoring/approved was sent: from then on the invoice is payable */
  approvedAt: number | null;
  canceledAt: number | null;
  /** completed payouts whose report lists the invoice as an invoice row, in order */
  completedPayouts: string[];
  /** the invoice fault drawn for it (none for most) */
  fault: InvoiceFault;
}

export type InvoiceFault =
  | 'none'
  | 'invoice_not_paid_out'
  | 'invoice_paid_out_twice'
  | 'fee_overcharged'
  | 'fixed_fee_twice'
  | 'canceled_invoice_paid'
  | 'buyer_paid_directly';

export type PayoutDocType = 'invoice' | 'credit_note' | 'buyer_payment' | 'dispute';

/** A deduction waiting for the next payout: a credit note, a buyer's direct payment or a lost dispute. */
export interface PendingDeduction {
  docType: Exclude<PayoutDocType, 'invoice'>;
  /** the credit note's number, or the invoice reference a buyer payment or dispute names */
  docNo: string;
  invoice: InvoiceRecord;
  amountCents: bigint;
  /** a buyer's direct payment: its bank credit */
  line?: BankLine;
  /** set when a completed payout's report deducts it */
  deductedBy?: string;
}

/** One row of a payout report, in cents and rate micros (the spec's columns). */
export interface PayoutReportRow {
  orderNo: string;
  docNo: string;
  docType: PayoutDocType;
  transactionAmountCents: bigint;
  rateMicros: number;
  transactionFeeCents: bigint;
  grossPurchasePriceCents: bigint;
  discountCents: bigint;
  vatOnDiscountCents: bigint;
  transferAmountCents: bigint;
  totalDeductionsCents: bigint;
  /** the invoice behind the row (null for a reference no invoice has) */
  invoice: InvoiceRecord | null;
}

/** The report the provider publishes for a completed payout. */
export interface PayoutReport {
  rows: PayoutReportRow[];
  /** forced to carry a Payout Reference column (a report that cannot be tied by its contents) */
  reference: 'sepa' | 'uuid' | null;
}

export interface PayoutRecord {
  uuid: string;
  sepaInstructionId: string;
  amountCents: bigint;
  externalReferenceIds: string[];
  at: number;
  status: 'complete' | 'cancelled';
  /** completed payouts only; a second payout of a shared SEPA reference has none (one file per reference) */
  report: PayoutReport | null;
}

export interface BankLine {
  /** the bank's entry reference: unique per statement line */
  id: string;
  bookedAt: number;
  /** positive credit, negative debit */
  amountCents: bigint;
  counterpartyName: string;
  counterpartyIban: string;
  /** end-to-end / instruction reference (the SEPA instruction id for payouts) */
  reference: string;
  remittance: string;
}

export type PayoutFault =
  | 'none'
  | 'payout_amount_mismatch'
  | 'payout_no_credit'
  | 'payout_unknown_invoice'
  | 'payout_duplicate_sepa'
  | 'payout_cancelled_credited'
  | 'payout_report_mismatch';

/** What was injected; the ground truth is derived from these when asked (see ground-truth.ts). */
export type FaultRecord =
  | { fault: 'never_delivered' | 'delayed_past_grace'; event: EmittedEvent; deliveredAt?: number }
  | { fault: 'reordered'; event: EmittedEvent }
  | { fault: 'second_event'; event: EmittedEvent; secondEventTime: string; secondEventKey: string }
  | { fault: 'repeated'; event: EmittedEvent; eventKey: string; copies: number }
  | { fault: 'wrong_secret'; event: EmittedEvent; eventKey: string; signedWith: Env }
  | { fault: 'silent_order' | 'ghost_order'; env: Env; order: OrderRecord }
  | { fault: 'payout_amount_mismatch'; env: Env; payout: PayoutRecord; line: BankLine }
  | { fault: 'payout_no_credit'; env: Env; payout: PayoutRecord }
  | { fault: 'payout_unknown_invoice'; env: Env; payout: PayoutRecord; unknownReference: string }
  | { fault: 'payout_duplicate_sepa'; env: Env; payout: PayoutRecord; original: PayoutRecord; invoices: InvoiceRecord[] }
  | { fault: 'payout_cancelled_credited'; env: Env; payout: PayoutRecord; line: BankLine; invoices: InvoiceRecord[] }
  | { fault: 'payout_report_mismatch'; env: Env; payout: PayoutRecord; droppedRow: PayoutReportRow; reportedCents: bigint }
  | { fault: 'invoice_not_paid_out'; env: Env; invoice: InvoiceRecord }
  | { fault: 'invoice_paid_out_twice'; env: Env; invoice: InvoiceRecord; payouts: [PayoutRecord, PayoutRecord] }
  | { fault: 'fee_overcharged' | 'fixed_fee_twice'; env: Env; invoice: InvoiceRecord; payout: PayoutRecord; expectedCents: bigint; observedCents: bigint }
  | { fault: 'canceled_invoice_paid'; env: Env; invoice: InvoiceRecord; payout: PayoutRecord }
  | { fault: 'buyer_paid_directly'; env: Env; invoice: InvoiceRecord; deduction: PendingDeduction }
  | { fault: 'invoice_fault_not_applicable'; env: Env; invoice: InvoiceRecord; intended: InvoiceFault; details: string }
  | { fault: 'credit_without_payout'; env: Env; line: BankLine };
