import { describe, expect, it } from 'vitest';
import { compareTallies, nameDifferences, tallyInjected, type FoundFinding } from '../../src/commands/demo-summary.js';
import type { ExpectedDiscrepancy, GroundTruth } from '../../sim/index.js';

const missed = (order: string, fault: string, timingDependent = false): ExpectedDiscrepancy => ({
  kind: 'missed_webhook', status: timingDependent ? 'resolved' : 'open', environment: 'sandbox', entity_type: 'order', entity_id: order,
  subject: 'confirmed', external_reference_id: null, sepa_reference: null, expected: 'confirmed', observed: null, details: '', fault,
  ...(timingDependent ? { timing_dependent: true } : {}),
});

const truth = (discrepancies: ExpectedDiscrepancy[], reordered: string[] = []): GroundTruth => ({
  seed: 's', start_time: '', sim_time: '', discrepancies, rejected_deliveries: [], uncertain_deliveries: [],
  benign_faults: reordered.map((order) => ({ fault: 'reordered', environment: 'sandbox', entity_type: 'order', entity_id: order, topic: 'order/confirmed', details: '' })),
});

const found = (order: string, status = 'open', kind = 'missed_webhook'): FoundFinding => ({ kind, entity_type: 'order', entity_id: order, status });

function differences(t: GroundTruth, f: FoundFinding[]): string[] {
  const tallies = compareTallies(tallyInjected(t), new Map([...new Set(f.map((x) => x.kind))].map((k) => [k, new Set(f.filter((x) => x.kind === k).map((x) => x.entity_id)).size])));
  return nameDifferences(t, f, tallies);
}

describe("the settled demo's differences", () => {
  it('are none when every injected order is found and nothing else', () => {
    expect(differences(truth([missed('o1', 'never_delivered'), missed('o2', 'never_delivered')]), [found('o1'), found('o2')])).toEqual([]);
  });

  it('name a late delivery no pass saw late, and a resolved finding of a reordered one, from the ground truth', () => {
    const lines = differences(truth([missed('o1', 'never_delivered'), missed('o2', 'delayed_past_grace', true)], ['o3']), [found('o1'), found('o3', 'resolved')]);
    expect(lines[0]).toBe('  difference: missed_webhook found 2, injected 2:');
    expect(lines).toContain('    order o2 injected (delayed_past_grace), not found: its held-back delivery arrived before any pass saw it late');
    expect(lines).toContain('    order o3 found, not injected as a fault: one of its events was delivered out of order, flagged while it was missing and resolved when it came');
  });

  it('call what the ground truth does not explain unexplained, never guessed', () => {
    // o3 was reordered, but its finding is still open: the reordering does not explain that.
    const lines = differences(truth([missed('o1', 'never_delivered')], ['o3']), [found('o3', 'open'), found('o4', 'resolved')]);
    expect(lines).toContain('    order o1 injected (never_delivered), not found: unexplained by the ground truth (a defect: please report it with the seed)');
    expect(lines).toContain('    order o3 found, not injected: unexplained by the ground truth (a defect: please report it with the seed)');
    expect(lines).toContain('    order o4 found, not injected: unexplained by the ground truth (a defect: please report it with the seed)');
  });

  it('name the unexplained first, and say how many of those beyond the named ones are unexplained', () => {
    const late = Array.from({ length: 7 }, (_, i) => missed(`late${i}`, 'delayed_past_grace', true));
    const lines = differences(truth([missed('o1', 'never_delivered'), ...late]), [found('o9')]);
    expect(lines[1]).toBe('    order o1 injected (never_delivered), not found: unexplained by the ground truth (a defect: please report it with the seed)');
    expect(lines[2]).toBe('    order o9 found, not injected: unexplained by the ground truth (a defect: please report it with the seed)');
    expect(lines.at(-1)).toBe('    and 4 more, explained by the ground truth: 4 held back, arrived before a pass saw it late');
    const many = Array.from({ length: 7 }, (_, i) => missed(`gone${i}`, 'never_delivered'));
    expect(differences(truth([...many, ...late]), []).at(-1)).toBe(
      '    and 9 more, 2 of them unexplained by the ground truth (a defect: please report it with the seed); explained: 7 held back, arrived before a pass saw it late');
  });

  it('count the explained ones beyond the named by their own explanation, not as the named ones', () => {
    // Five late deliveries are named; the seven beyond them are reordered ones, resolved.
    const late = Array.from({ length: 5 }, (_, i) => missed(`late${i}`, 'delayed_past_grace', true));
    const reordered = Array.from({ length: 7 }, (_, i) => `r${i}`);
    const lines = differences(truth(late, reordered), reordered.map((o) => found(o, 'resolved')));
    expect(lines.filter((l) => l.includes('held-back'))).toHaveLength(5);
    expect(lines.at(-1)).toBe('    and 7 more, explained by the ground truth: 7 delivered out of order, resolved when it came');
  });

  it('name a duplicate delivery beyond those injected by the uncertain deliveries, and only up to their number', () => {
    const dup: ExpectedDiscrepancy = { ...missed('d1', 'repeated'), kind: 'duplicate_delivery', entity_type: 'order' };
    const uncertain = { environment: 'sandbox' as const, topic: 'order/confirmed', entity_id: 'o9', event_key: 'k', address: 'http://x', details: 'attempt 1 timed out' };
    const t = { ...truth([dup]), uncertain_deliveries: [uncertain] };
    const tallies = [{ kind: 'duplicate_delivery', injected: 1, found: 2 }];
    expect(nameDifferences(t, [], tallies)[0]).toMatch(/^  difference: duplicate_delivery 1 found beyond those injected: retries of attempts that timed out/);
    expect(nameDifferences(t, [], [{ kind: 'duplicate_delivery', injected: 1, found: 3 }])[0]).toMatch(/unexplained/);
  });

  it('name the kinds a demo cannot show by the setting that needs days', () => {
    const invoice: ExpectedDiscrepancy = { ...missed('i1', 'invoice_not_paid_out'), kind: 'invoice_not_paid_out', entity_type: 'invoice' };
    expect(differences(truth([invoice]), [])).toEqual(['  difference: invoice_not_paid_out 1 not found: it needs INVOICE_PAYOUT_DAYS of real time, longer than a demo']);
  });
});
