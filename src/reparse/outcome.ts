import type { StorableClassification } from '../webhooks/classify.js';

/**
 * What re-classifying one stored delivery did:
 * - applied: it is now the applied delivery of its event (newly parsed, typically), its typed row
 *   written; also an applied delivery whose typed row was written now: one the current parser
 *   writes with other values (the older row removed and written again: stale-typed-rows.ts), or
 *   one that was missing (a typed table emptied to be rebuilt), so the run counts as a change;
 * - duplicate: it now parses, and another delivery of its event is the applied one (a retry);
 * - still_unparsed: unparsed before and after, with a different reason;
 * - now_unparsed: parsed before, not any more (a stricter parser; its typed row, if any, is removed);
 * - unchanged: the same status, topic, reason, event key and decision as before.
 */
export const REPARSE_OUTCOMES = ['applied', 'duplicate', 'still_unparsed', 'now_unparsed', 'unchanged'] as const;
export type ReparseOutcome = (typeof REPARSE_OUTCOMES)[number];

/** A stored delivery's parsed fields as they were before this run. */
export interface StoredFields {
  topic: string | null;
  parseStatus: string;
  parseError: string | null;
  eventKey: string | null;
  applied: boolean;
}

export function outcomeOf(before: StoredFields, after: StorableClassification, applied: boolean, typedWritten = false): ReparseOutcome {
  const same =
    before.parseStatus === after.status &&
    before.topic === after.topic &&
    before.parseError === (after.error ?? null) &&
    before.eventKey === (after.event?.key ?? null) &&
    before.applied === applied;
  if (same && !typedWritten) return 'unchanged';
  if (after.status === 'parsed') return applied ? 'applied' : 'duplicate';
  return before.parseStatus === 'parsed' ? 'now_unparsed' : 'still_unparsed';
}

/** One line of the summary: deliveries of a topic that went from one status to another, by outcome. */
export interface ReparseChange {
  topic: string | null;
  from: string;
  to: string;
  outcome: ReparseOutcome;
  count: number;
}

/** Counts of a run: per outcome, and per (topic, status before, status after, outcome). */
export class ReparseTally {
  examined = 0;
  readonly outcomes: Record<ReparseOutcome, number> = { applied: 0, duplicate: 0, still_unparsed: 0, now_unparsed: 0, unchanged: 0 };
  private readonly changes = new Map<string, ReparseChange>();

  add(topic: string | null, from: string, to: string, outcome: ReparseOutcome): void {
    this.examined += 1;
    this.outcomes[outcome] += 1;
    if (outcome === 'unchanged') return;
    const key = JSON.stringify([topic, from, to, outcome]);
    const change = this.changes.get(key);
    if (change) change.count += 1;
    else this.changes.set(key, { topic, from, to, outcome, count: 1 });
  }

  /** Changes in a stable order: topic, then statuses, then outcome. */
  changeList(): ReparseChange[] {
    return [...this.changes.values()].sort(
      (a, b) => (a.topic ?? '').localeCompare(b.topic ?? '') || a.from.localeCompare(b.from) || a.to.localeCompare(b.to) || a.outcome.localeCompare(b.outcome),
    );
  }

  get changed(): number {
    return this.examined - this.outcomes.unchanged;
  }
}
