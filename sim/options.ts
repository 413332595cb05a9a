import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { Logger } from '../src/log/logger.js';
import { contractTermsSchema, type ContractTermsInput } from './contract.js';
import { parseDuration } from './time.js';

export const ENVIRONMENTS = ['sandbox', 'production'] as const;
export type Env = (typeof ENVIRONMENTS)[number];

const rate = z.number().min(0).max(1);

/**
 * Fault rates. Each is a probability per eligible item (see README.md): the event-level order
 * faults are mutually exclusive per event and their sum must stay at or below 1.
 */
export const faultRatesSchema = z
  .object({
    /** terminal order events (no later transition planned) never delivered */
    neverDelivered: rate.default(0),
    /** terminal order events delivered only after the receiver's grace period */
    delayedPastGrace: rate.default(0),
    /** order events delivered after the order's next event */
    reordered: rate.default(0),
    /** a second distinct event (same order and state, later event_time) */
    secondEvent: rate.default(0),
    /** an extra copy of an order event signed with the other environment's secret */
    wrongSecret: rate.default(0),
    /** order, invoice and payout events delivered again with identical bytes */
    repeated: rate.default(0),
    /** per order: the API lists it, no webhook ever mentions it */
    silentOrder: rate.default(0),
    /** per order: webhooks for an order the API never lists */
    ghostOrder: rate.default(0),
    /** per payout: the bank credit carries a different amount */
    payoutAmountMismatch: rate.default(0),
    /** per payout: no bank credit at all */
    payoutNoCredit: rate.default(0),
    /** per payout: it names an invoice reference that was never created */
    payoutUnknownInvoice: rate.default(0),
    /** per payout: a second payout with another uuid carries the same SEPA reference */
    payoutDuplicateSepa: rate.default(0),
    /** per payout: payout/cancelled, yet the bank credited it */
    payoutCancelledCredited: rate.default(0),
    /** per simulated day: a credit from the provider's account with a SEPA reference no payout has */
    creditWithoutPayout: rate.default(0),
    /** per payout: its report leaves out one invoice row, so it disagrees with the payout */
    payoutReportMismatch: rate.default(0),
    /** per factored invoice: no payout ever lists it */
    invoiceNotPaidOut: rate.default(0),
    /** per factored invoice: a second completed payout lists it again */
    invoicePaidOutTwice: rate.default(0),
    /** per factored invoice: its report row's MDR is 0.5 percentage points above the contract's */
    feeOvercharged: rate.default(0),
    /** per factored invoice after its order's first: its report row carries the fixed fee again */
    fixedFeeTwice: rate.default(0),
    /** per canceled invoice: the next payout lists it */
    canceledInvoicePaid: rate.default(0),
    /** per factored invoice: the buyer pays the merchant directly (a bank credit naming the invoice), deducted from a later payout */
    buyerPaidDirectly: rate.default(0),
  })
  .strict()
  .refine((r) => r.neverDelivered + r.delayedPastGrace + r.reordered + r.secondEvent + r.wrongSecret + r.repeated <= 1, {
    message: 'the per-event order fault rates must sum to at most 1',
  })
  .refine((r) => r.payoutAmountMismatch + r.payoutNoCredit + r.payoutUnknownInvoice + r.payoutDuplicateSepa + r.payoutCancelledCredited + r.payoutReportMismatch <= 1, {
    message: 'the per-payout fault rates must sum to at most 1',
  })
  .refine((r) => r.invoiceNotPaidOut + r.invoicePaidOutTwice + r.feeOvercharged + r.fixedFeeTwice + r.canceledInvoicePaid + r.buyerPaidDirectly <= 1, {
    message: 'the per-invoice fault rates must sum to at most 1',
  });
export type FaultRates = z.infer<typeof faultRatesSchema>;

export const NO_FAULTS: FaultRates = faultRatesSchema.parse({});

/** Rates that make every kind appear within a simulated day or two of a default business. */
export const DEFAULT_FAULT_RATES: FaultRates = faultRatesSchema.parse({
  neverDelivered: 0.05,
  delayedPastGrace: 0.03,
  reordered: 0.05,
  secondEvent: 0.03,
  wrongSecret: 0.02,
  repeated: 0.05,
  silentOrder: 0.03,
  ghostOrder: 0.03,
  payoutAmountMismatch: 0.1,
  payoutNoCredit: 0.1,
  payoutUnknownInvoice: 0.1,
  payoutDuplicateSepa: 0.1,
  payoutCancelledCredited: 0.1,
  creditWithoutPayout: 0.3,
  payoutReportMismatch: 0.1,
  invoiceNotPaidOut: 0.02,
  invoicePaidOutTwice: 0.02,
  feeOvercharged: 0.03,
  fixedFeeTwice: 0.3,
  canceledInvoicePaid: 0.3,
  buyerPaidDirectly: 0.02,
});

/**
 * Payload forms the spec allows without showing them, each a probability per eligible payload.
 * They change bytes, never the business: the ground truth is the same as without them (each has its
 * own seeded stream, see variants.ts).
 */
export const payloadVariantsSchema = z
  .object({
    /** payout/* and invoice/payment: amount_cents as a JSON number instead of an integer string */
    numericAmounts: rate.default(0.2),
    /** payout/*: external_reference_ids as a JSON list in the string, a bracketed list, or '; '-separated */
    referenceLists: rate.default(0.3),
    /** order events' bank_account as a UK account (sort_code and account_number, no IBAN or BIC) */
    ukBankAccounts: rate.default(0.2),
    /**
     * bank statements: a payout credit whose SEPA reference is not in the end-to-end or instruction
     * id but in the remittance text after an invoice number ("Rechnung RE… Auszahlung PO…")
     */
    remittanceReferences: rate.default(0.3),
  })
  .strict();
export type PayloadVariantRates = z.infer<typeof payloadVariantsSchema>;

export const NO_PAYLOAD_VARIANTS: PayloadVariantRates = { numericAmounts: 0, referenceLists: 0, ukBankAccounts: 0, remittanceReferences: 0 };

export const businessSchema = z
  .object({
    ordersPerDay: z.number().positive().max(100_000).default(48),
    initialBuyers: z.number().int().min(1).max(10_000).default(6),
    newBuyersPerDay: z.number().min(0).max(10_000).default(2),
    /** share of shipped orders shipped in two parts, each with its invoice (the fixed fee is charged on the first) */
    splitShipmentRate: z.number().min(0).max(1).default(0.15),
    /** share of factored invoices paid by direct debit (the rest by bank transfer): the MDR may differ */
    directDebitRate: z.number().min(0).max(1).default(0.25),
    /** share of factored invoices a buyer disputes and the merchant loses: deducted 21 days later */
    disputeRate: z.number().min(0).max(1).default(0.03),
    /** UTC hour of the daily payout run (the first of the day's runs) */
    payoutHourUtc: z.number().int().min(0).max(23).default(6),
    /** payout runs a day, evenly spaced from payoutHourUtc (the demo's short minute needs several) */
    payoutRunsPerDay: z.number().int().min(1).max(24).refine((n) => 24 % n === 0, { message: 'payoutRunsPerDay must divide 24 (runs a whole number of hours apart)' }).default(1),
    /** unrelated bank lines per day (credits and debits) */
    unrelatedBankLinesPerDay: z.number().int().min(0).max(1000).default(3),
  })
  .strict();
export type BusinessOptions = z.infer<typeof businessSchema>;

export interface SimulatorOptions {
  /** Same seed, same options: the same business, payloads, signatures and faults. Default 1. */
  seed?: number | string;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Simulated milliseconds per real millisecond while playing (runFor, drain). Default 1. */
  timeScale?: number;
  /** Simulated start, ISO 8601. Default 2026-01-05T00:00:00Z (fixed, so runs reproduce). */
  startTime?: string;
  faults?: Partial<FaultRates>;
  /** Default: payloadVariantsSchema's defaults (on); NO_PAYLOAD_VARIANTS sends only the spec's example forms. */
  payloadVariants?: Partial<PayloadVariantRates>;
  business?: Partial<BusinessOptions>;
  /** The contract the provider deducts by, in CONTRACT_TERMS' shape; default DEFAULT_CONTRACT_TERMS (contract.ts). */
  contractTerms?: ContractTermsInput;
  signatureHeader?: string;
  apiKeys?: Partial<Record<Env, string>>;
  secrets?: Partial<Record<Env, string>>;
  defaultPerPage?: number;
  maxPerPage?: number;
  rateLimitPerSecond?: number;
  /** Real-time clock for the rate limiter (ms); tests pass a fake one. */
  rateLimitNow?: () => number;
  /** Real milliseconds a receiver has to answer (the spec: 5 s). */
  deliveryTimeoutMs?: number;
  /**
   * Simulated days (0 = the day startTime falls in) on which GET /api/v1/orders answers 503 from the
   * day's start until an hour into the next, while webhooks go on: the poller's last picture grows
   * older than the webhooks (a provider API outage). It injects no finding.
   */
  apiOutageDays?: readonly number[];
  maxRetries?: number;
  /** First retry delay in simulated ms; doubles each retry (60 s gives 1, 2, 4, 8, 16 min). */
  retryBaseMs?: number;
  retryFactor?: number;
  /** Simulated delivery latency range [min, max] ms after the event. */
  deliveryLatencyMs?: [number, number];
  /** The receiver's grace period in simulated ms: delayed-past-grace faults land after it. */
  graceMs?: number;
  deliveryConcurrency?: number;
  log?: Logger;
}

export const scenarioSchema = z
  .object({
    seed: z.union([z.number(), z.string()]).optional(),
    timeScale: z.number().positive().optional(),
    startTime: z.string().datetime().optional(),
    duration: z.string().optional(),
    graceSeconds: z.number().positive().optional(),
    faults: z.record(z.string(), z.number()).optional(),
    business: z.record(z.string(), z.number()).optional(),
    contractTerms: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type Scenario = z.infer<typeof scenarioSchema> & { durationMs?: number };

/** Reads and validates a scenario file (JSON). Throws with the file and the field at fault. */
export async function loadScenario(path: string): Promise<Scenario> {
  const text = await readFile(path, 'utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`scenario ${path}: not JSON: ${(error as Error).message}`);
  }
  const parsed = scenarioSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`scenario ${path}: ${describeIssues(parsed.error)}`);
  const scenario: Scenario = { ...parsed.data };
  if (parsed.data.faults) validateFaults(parsed.data.faults, path);
  if (parsed.data.business) {
    const b = businessSchema.partial().safeParse(parsed.data.business);
    if (!b.success) throw new Error(`scenario ${path}: business: ${describeIssues(b.error)}`);
  }
  if (parsed.data.contractTerms) {
    const terms = contractTermsSchema.safeParse(parsed.data.contractTerms);
    if (!terms.success) throw new Error(`scenario ${path}: contractTerms: ${describeIssues(terms.error)}`);
  }
  if (parsed.data.duration !== undefined) {
    const ms = parseDuration(parsed.data.duration);
    if (ms === undefined) throw new Error(`scenario ${path}: duration: expected e.g. 90s, 6h, 7d`);
    scenario.durationMs = ms;
  }
  return scenario;
}

export function validateFaults(faults: Partial<Record<string, number>>, where = 'faults'): FaultRates {
  const parsed = faultRatesSchema.safeParse(faults);
  if (!parsed.success) throw new Error(`${where}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}
