import type { ExpectedDiscrepancy, GroundTruth } from '../../sim/index.js';

/** The order kinds the simulator's ground truth is exact for (issue 5, "How we will know"). */
export const SCORED_KINDS = ['missed_webhook', 'orphan_webhook', 'duplicate_event', 'duplicate_delivery'] as const;
export type ScoredKind = (typeof SCORED_KINDS)[number];

/** One row of `report discrepancies --format json` (CONTRACT.md field names). */
export interface ReportRow {
  id: number;
  kind: string;
  status: string;
  environment: string;
  entity_type: string;
  entity_id: string;
  external_reference_id: string | null;
  sepa_reference: string | null;
  expected: string | null;
  observed: string | null;
  details: string;
  first_detected_at: string;
  last_checked_at: string;
  resolved_at: string | null;
}

/**
 * What the report does not carry but matching needs, read from the ledger by discrepancy id: the
 * subject (the state of an order's duplicate_event), and for a duplicate_delivery (whose entity is
 * the delivery row) the event key and the entity the delivery named.
 */
export interface RowLedgerFacts {
  subject: string;
  eventKey: string | null;
  deliveredEntityId: string | null;
}

export interface KindScore {
  kind: ScoredKind;
  /** ground-truth findings a correct reconciler must report */
  expected: number;
  /** report rows of this kind in scope (order entities; every duplicate_delivery) */
  reported: number;
  truePositives: number;
  falsePositives: string[];
  falseNegatives: string[];
  /** matched, but the status or expected value differs from the ground truth */
  wrongDetails: string[];
  /** timing-dependent or uncertain findings, accepted whether reported or not */
  accepted: number;
  acceptedKeys: string[];
  precision: number;
  recall: number;
}

interface Candidate {
  key: string;
  rows: ReportRow[];
}

/**
 * The matching key of a finding, per the simulator README: (kind, entity) plus the subject where one
 * entity can have several. missed_webhook is keyed by order only: the ground truth names the state
 * the API shows now, while the reconciler also flags an earlier state the poller saw whose webhook
 * never came (a silent order seen as authorized, then confirmed), so one order may have two rows.
 */
function truthKey(d: ExpectedDiscrepancy): string {
  switch (d.kind) {
    case 'duplicate_event':
      return `${d.entity_id}|${d.subject}`;
    case 'duplicate_delivery':
      return `${d.entity_id}|${d.event_key ?? d.subject}|${d.delivery_number ?? 2}`;
    default:
      return d.entity_id;
  }
}

function reportCandidates(kind: ScoredKind, rows: readonly ReportRow[], facts: ReadonlyMap<number, RowLedgerFacts>): Candidate[] {
  const byKey = new Map<string, ReportRow[]>();
  const add = (key: string, row: ReportRow) => byKey.set(key, [...(byKey.get(key) ?? []), row]);
  const ofKind = rows.filter((r) => r.kind === kind && r.environment === 'sandbox');
  if (kind === 'duplicate_delivery') {
    // Number the extra deliveries of each event 2, 3, ... in arrival (id) order, as the ground truth does.
    const byEvent = new Map<string, ReportRow[]>();
    for (const row of ofKind) {
      const f = facts.get(row.id);
      const event = `${f?.deliveredEntityId ?? '?'}|${f?.eventKey ?? `unknown-${row.id}`}`;
      byEvent.set(event, [...(byEvent.get(event) ?? []), row]);
    }
    for (const [event, group] of byEvent) {
      group.sort((a, b) => Number(a.entity_id) - Number(b.entity_id));
      group.forEach((row, i) => add(`${event}|${i + 2}`, row));
    }
  } else {
    for (const row of ofKind.filter((r) => r.entity_type === 'order')) {
      add(kind === 'duplicate_event' ? `${row.entity_id}|${facts.get(row.id)?.subject ?? ''}` : row.entity_id, row);
    }
  }
  return [...byKey].map(([key, group]) => ({ key, rows: group }));
}

/** Checks a matched pair beyond its key: the status it ends in, and the state for a missed webhook. */
function detailProblem(d: ExpectedDiscrepancy, rows: readonly ReportRow[]): string | undefined {
  const fitting = rows.filter((r) => r.status === d.status && (d.kind !== 'missed_webhook' || r.expected === d.expected));
  if (fitting.length > 0) return undefined;
  const seen = rows.map((r) => `${r.status}/${r.expected ?? ''}`).join(', ');
  return `${d.kind} ${truthKey(d)}: ground truth ${d.status}/${d.expected ?? ''} (${d.fault}), report ${seen}`;
}

const ratio = (num: number, den: number) => (den === 0 ? 1 : num / den);

export interface ScoreOptions {
  /**
   * The run let a pass see every late delivery's window (see week.ts, lateWindows): the findings
   * the ground truth marks timing_dependent are then required, not merely accepted.
   */
  requireTimingDependent?: boolean;
}

export function scoreOrderKinds(
  rows: readonly ReportRow[],
  facts: ReadonlyMap<number, RowLedgerFacts>,
  truth: GroundTruth,
  options: ScoreOptions = {},
): Record<ScoredKind, KindScore> {
  const uncertainKeys = new Set(truth.uncertain_deliveries.map((u) => u.event_key));
  const out = {} as Record<ScoredKind, KindScore>;
  for (const kind of SCORED_KINDS) {
    const expectedAll = truth.discrepancies.filter(
      (d) => d.kind === kind && d.environment === 'sandbox' && (kind === 'duplicate_delivery' || d.entity_type === 'order'),
    );
    const required = new Map<string, ExpectedDiscrepancy>();
    const optional = new Set<string>();
    for (const d of expectedAll) {
      // A late delivery (delayed_past_grace) is flagged only by a pass inside its window: accepted either way.
      if (d.timing_dependent && !options.requireTimingDependent) optional.add(truthKey(d));
      else required.set(truthKey(d), d);
    }
    if (kind === 'missed_webhook') {
      // A reordered event delivered after its successor is benign in the ground truth, yet when a poll
      // showed its state and a pass ran past the grace before it arrived, a missed_webhook was right
      // then; it must have resolved once the webhook came.
      for (const b of truth.benign_faults) if (b.fault === 'reordered' && b.environment === 'sandbox') optional.add(b.entity_id);
    }
    const candidates = reportCandidates(kind, rows, facts);
    const score: KindScore = {
      kind, expected: required.size, reported: 0, truePositives: 0, falsePositives: [], falseNegatives: [], wrongDetails: [],
      accepted: 0, acceptedKeys: [], precision: 1, recall: 1,
    };
    const matched = new Set<string>();
    for (const c of candidates) {
      const d = required.get(c.key);
      if (d) {
        score.reported += 1;
        score.truePositives += 1;
        matched.add(c.key);
        const problem = detailProblem(d, c.rows);
        if (problem) score.wrongDetails.push(problem);
      } else if (optional.has(c.key)) {
        score.accepted += 1;
        score.acceptedKeys.push(`${c.key} (${c.rows.map((r) => `${r.status} ${r.expected}`).join('; ')})`);
        // Whatever was late has arrived by the end: such a finding can only be resolved now.
        if (c.rows.some((r) => r.status !== 'resolved')) score.wrongDetails.push(`${kind} ${c.key}: accepted late finding still ${c.rows.map((r) => r.status).join(', ')}`);
      } else if (kind === 'duplicate_delivery' && uncertainKeys.has(c.key.split('|')[1] ?? '')) {
        // A retry after an attempt that timed out on the simulator's side but was committed here.
        score.accepted += 1;
        score.acceptedKeys.push(`${c.key} (uncertain delivery)`);
      } else {
        score.reported += 1;
        score.falsePositives.push(`${c.key} (${c.rows.map((r) => `#${r.id} ${r.status} expected=${r.expected} observed=${r.observed}`).join('; ')})`);
      }
    }
    for (const [key, d] of required) if (!matched.has(key)) score.falseNegatives.push(`${key} (${d.fault}: ${d.details})`);
    score.precision = ratio(score.truePositives, score.truePositives + score.falsePositives.length);
    score.recall = ratio(score.truePositives, score.expected);
    out[kind] = score;
  }
  return out;
}

/**
 * Issue 24's kinds, scored against the simulator's ground truth by (kind, entity) as the simulator
 * README says, plus the payout as subject for payout_deduction_mismatch (one invoice may be charged
 * wrongly in two payouts). Entities: the invoice uuid (payout_deduction_mismatch,
 * invoice_not_paid_out, invoice_paid_out_twice, payout_pays_canceled_invoice), the payout uuid
 * (payout_report_mismatch), the bank's entry reference (buyer_paid_merchant_directly).
 */
export const INVOICE_KINDS = [
  'invoice_not_paid_out',
  'invoice_paid_out_twice',
  'payout_pays_canceled_invoice',
  'buyer_paid_merchant_directly',
  'payout_deduction_mismatch',
  'payout_report_mismatch',
] as const;
export type InvoiceKind = (typeof INVOICE_KINDS)[number];

const INVOICE_KIND_ENTITY: Record<InvoiceKind, string> = {
  invoice_not_paid_out: 'invoice',
  invoice_paid_out_twice: 'invoice',
  payout_pays_canceled_invoice: 'invoice',
  buyer_paid_merchant_directly: 'statement_line',
  payout_deduction_mismatch: 'invoice',
  payout_report_mismatch: 'payout',
};

export interface InvoiceKindScore extends Omit<KindScore, 'kind'> {
  kind: InvoiceKind;
  /** invoice_not_paid_out still inside INVOICE_PAYOUT_DAYS when judged: a report of one is a false positive */
  notYetDue: number;
}

export interface InvoiceScoreOptions {
  /** the daemon's INVOICE_PAYOUT_DAYS */
  invoicePayoutDays: number;
  /** when the last reconcile pass ran (the daemon's clock, in the simulator's time when they agree) */
  judgedAt: Date;
  /**
   * invoice_not_paid_out whose due time (payable_since + INVOICE_PAYOUT_DAYS) falls this close to
   * judgedAt are accepted either way: the daemon learns of the factoring only when it is delivered.
   * Default one hour.
   */
  dueMarginMs?: number;
  environment?: string;
}

export function scoreInvoiceKinds(
  rows: readonly ReportRow[],
  facts: ReadonlyMap<number, RowLedgerFacts>,
  truth: GroundTruth,
  options: InvoiceScoreOptions,
): Record<InvoiceKind, InvoiceKindScore> {
  const environment = options.environment ?? 'sandbox';
  const margin = options.dueMarginMs ?? 3_600_000;
  const judged = options.judgedAt.getTime();
  const key = (kind: InvoiceKind, entityId: string, subject: string) => (kind === 'payout_deduction_mismatch' ? `${entityId}|${subject}` : entityId);
  const out = {} as Record<InvoiceKind, InvoiceKindScore>;
  for (const kind of INVOICE_KINDS) {
    const required = new Map<string, ExpectedDiscrepancy>();
    const optional = new Set<string>();
    const notYet = new Set<string>();
    for (const d of truth.discrepancies) {
      if (d.kind !== kind || d.environment !== environment) continue;
      const k = key(kind, d.entity_id, d.subject);
      if (kind === 'invoice_not_paid_out') {
        const due = Date.parse(d.payable_since ?? '') + options.invoicePayoutDays * 86_400_000;
        if (Number.isNaN(due)) throw new Error(`invoice_not_paid_out ${d.entity_id} has no payable_since`);
        if (due > judged + margin) notYet.add(k);
        else if (due > judged - margin) optional.add(k);
        else required.set(k, d);
      } else required.set(k, d);
    }
    const byKey = new Map<string, ReportRow[]>();
    for (const row of rows) {
      if (row.kind !== kind || row.environment !== environment || row.entity_type !== INVOICE_KIND_ENTITY[kind]) continue;
      const k = key(kind, row.entity_id, facts.get(row.id)?.subject ?? '');
      byKey.set(k, [...(byKey.get(k) ?? []), row]);
    }
    const score: InvoiceKindScore = {
      kind, expected: required.size, reported: 0, truePositives: 0, falsePositives: [], falseNegatives: [], wrongDetails: [],
      accepted: 0, acceptedKeys: [], precision: 1, recall: 1, notYetDue: notYet.size,
    };
    for (const [k, group] of byKey) {
      const d = required.get(k);
      if (d) {
        score.reported += 1;
        score.truePositives += 1;
        if (!group.some((r) => r.status === d.status)) score.wrongDetails.push(`${kind} ${k}: ground truth ${d.status} (${d.fault}), report ${group.map((r) => r.status).join(', ')}`);
      } else if (optional.has(k)) {
        score.accepted += 1;
        score.acceptedKeys.push(`${k} (due within ${margin} ms of the pass)`);
      } else {
        score.reported += 1;
        score.falsePositives.push(`${k}${notYet.has(k) ? ' (not yet due)' : ''} (${group.map((r) => `#${r.id} ${r.status} expected=${r.expected} observed=${r.observed}`).join('; ')})`);
      }
    }
    for (const [k, d] of required) if (!byKey.has(k)) score.falseNegatives.push(`${k} (${d.fault}: ${d.details})`);
    score.precision = ratio(score.truePositives, score.truePositives + score.falsePositives.length);
    score.recall = ratio(score.truePositives, score.expected);
    out[kind] = score;
  }
  return out;
}
