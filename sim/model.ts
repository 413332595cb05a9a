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
}

export interface PayoutRecord {
  uuid: string;
  sepaInstructionId: string;
  amountCents: bigint;
  externalReferenceIds: string[];
  at: number;
  status: 'complete' | 'cancelled';
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
  | 'payout_cancelled_credited';

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
  | { fault: 'payout_duplicate_sepa'; env: Env; payout: PayoutRecord; original: PayoutRecord }
  | { fault: 'payout_cancelled_credited'; env: Env; payout: PayoutRecord; line: BankLine }
  | { fault: 'credit_without_payout'; env: Env; line: BankLine };
