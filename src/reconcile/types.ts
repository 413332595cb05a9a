import type { TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { DISCREPANCY_KINDS, ENTITY_TYPES } from '../schema/discrepancies.js';

export type DiscrepancyKind = (typeof DISCREPANCY_KINDS)[number];
export type EntityType = (typeof ENTITY_TYPES)[number];

/** Order states that have a webhook topic (spec, "Topics"): only these can have a missed webhook. */
export { ORDER_STATES_WITH_TOPIC } from '../provider/vocabulary.js';

/** The payout rules' settings (rules/payout-common.ts payoutSettings normalises them). */
export interface PayoutRuleSettings {
  /** PAYOUT_SETTLEMENT_DAYS */
  settlementDays: number;
  /** PAYOUT_SOURCE_IBANS, normalised (no spaces, upper case) */
  sourceIbans: readonly string[];
  /** PAYOUT_ACCOUNT_IBANS, normalised: the merchant's accounts that receive payouts; empty: learned from payout credits */
  accountIbans?: readonly string[];
  /** PAYOUT_REFERENCE_PATTERN: a Postgres regular expression; a credit whose reference matches is a payout credit */
  referencePattern: string | null;
}

/**
 * The contract's deduction terms as the payout_deduction_mismatch rule reads them (the integer form
 * of CONTRACT_TERMS: payout-reports/contract-terms.ts parses the setting; a rate in micros is a
 * percent x 10,000, 2.9 % -> 29000).
 */
export interface DeductionTerms {
  /** the contract's currency: rows in another currency are not judged; null: any */
  currency: string | null;
  /** MDR entries; the most specific one that fits a row wins (method and terms, then method, then neither) */
  mdr: readonly { paymentMethod: string | null; paymentTermsDays: number | null; rateMicros: number }[];
  fixedFeeCents: bigint;
  vatRateMicros: number;
  /** VAT on the fixed fee too (true), on the Discount alone (false), either accepted (null): payout-reports/contract-terms.ts */
  vatOnFixedFee: boolean | null;
}

/** The invoice rules' settings. */
export interface InvoiceRuleSettings {
  /** INVOICE_PAYOUT_DAYS */
  payoutDays: number;
  /** CONTRACT_TERMS; null: deductions are reported, not judged */
  terms: DeductionTerms | null;
}

/** What every rule needs: one environment, one instant, one grace period. */
export interface RuleParams {
  environment: ProviderEnvironment;
  /** The pass's clock; tests move it to cross the grace period without waiting. */
  now: Date;
  graceSeconds: number;
  /** True in an incremental pass: rules look only at the orders in the temporary table `scope`. */
  scoped: boolean;
  /**
   * True in an incremental pass that leaves the payout kinds standing (invoice-scope.ts): so do
   * duplicate_event's findings of payouts, which read payout events alone.
   */
  payoutsStand?: boolean;
  /** The payout rules' settings (rules/payout-common.ts); their defaults when absent. */
  payout?: PayoutRuleSettings;
  /** The invoice rules' settings (rules/invoice-common.ts); their defaults when absent. */
  invoice?: InvoiceRuleSettings;
}

/**
 * A rule adds its current findings to the pass's temporary table `found` (see found.ts); the
 * lifecycle then turns the difference between `found` and `discrepancies` into status changes.
 */
export interface Rule {
  /** The discrepancy kind this rule decides: it alone opens and resolves findings of it. */
  kind: DiscrepancyKind;
  /** The entities its findings name; an order rule's findings follow an incremental pass's scope. */
  entities: readonly EntityType[];
  collect(tx: TransactionSql, params: RuleParams): Promise<number>;
}

export interface PassSummary {
  skipped: boolean;
  environment: ProviderEnvironment;
  runId?: number;
  /** 'incremental' looks only at orders whose evidence may have changed (see scope.ts). */
  mode: 'full' | 'incremental';
  /** Orders in an incremental pass's scope. */
  scopeOrders?: number;
  /**
   * Whether the invoice kinds were judged, or stood as their evidence had not changed, and why;
   * `standing`: those that stood though the others were judged (invoice-scope.ts).
   */
  invoices?: { judged: boolean; reason: string; standing?: string[] };
  /** Whether the payout kinds (invoice-scope.ts PAYOUT_EVIDENCE_KINDS) were judged, or stood, and why. */
  payouts?: { judged: boolean; reason: string };
  startedAt: string;
  durationMs: number;
  /**
   * Findings per rule among what this pass judged (an incremental pass: the orders of its scope,
   * and every payout and invoice): those that still hold, and new ones.
   */
  found: Record<string, number>;
  /** Wall time of each step (scope, each rule, upsert, resolve, duplicate_delivery). */
  stepMs: Record<string, number>;
  opened: number;
  reopened: number;
  resolved: number;
  duplicateDeliveries: number;
}
