import type { Env } from './options.js';

export type ExpectedKind =
  | 'missed_webhook'
  | 'orphan_webhook'
  | 'duplicate_event'
  | 'duplicate_delivery'
  | 'payout_not_on_statement'
  | 'statement_credit_without_payout'
  | 'payout_amount_mismatch'
  | 'payout_cancelled_but_credited'
  | 'payout_unknown_invoice'
  | 'invoice_not_paid_out'
  | 'invoice_paid_out_twice'
  | 'payout_pays_canceled_invoice'
  | 'buyer_paid_merchant_directly'
  | 'payout_deduction_mismatch'
  | 'payout_report_mismatch';

/** One expected finding, in the discrepancy report's JSON shape plus the fault that caused it. */
export interface ExpectedDiscrepancy {
  kind: ExpectedKind;
  /** the status the finding should end in: duplicate deliveries and late-but-delivered events end resolved */
  status: 'open' | 'resolved';
  environment: Env;
  entity_type: 'order' | 'invoice' | 'payout' | 'statement_line';
  entity_id: string;
  /** tells apart two findings of one kind on one entity: the state, SEPA reference, event key or invoice reference */
  subject: string;
  external_reference_id: string | null;
  sepa_reference: string | null;
  expected: string | null;
  observed: string | null;
  details: string;
  fault: string;
  event_key?: string;
  delivery_number?: number;
  related_entity_id?: string;
  /** only seen by a reconciliation pass that runs inside a time window (a late delivery) */
  timing_dependent?: boolean;
  /**
   * invoice_not_paid_out: when the invoice became payable (factoring approved, ISO seconds); a
   * reconciler reports it only INVOICE_PAYOUT_DAYS after this
   */
  payable_since?: string;
  /**
   * payout_amount_mismatch whose credit is short: when the payout happened (ISO). A reconciler calls
   * a credit short only once the statements cover PAYOUT_SETTLEMENT_DAYS from then (the rest of the
   * money could still be booked), so a short payout near the end of a run may not be judged yet.
   */
  payout_time?: string;
}

export interface RejectedDelivery {
  environment: Env;
  signed_with: Env;
  topic: string;
  entity_type: string;
  entity_id: string;
  event_key: string;
  details: string;
}

export interface BenignFault {
  fault: string;
  environment: Env;
  entity_type: string;
  entity_id: string;
  topic: string;
  details: string;
}

export interface UncertainDelivery {
  environment: Env;
  topic: string;
  entity_id: string;
  event_key: string;
  address: string;
  details: string;
}

export interface GroundTruth {
  seed: string;
  start_time: string;
  sim_time: string;
  discrepancies: ExpectedDiscrepancy[];
  rejected_deliveries: RejectedDelivery[];
  benign_faults: BenignFault[];
  uncertain_deliveries: UncertainDelivery[];
}
