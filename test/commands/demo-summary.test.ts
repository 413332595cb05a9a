import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareTallies, demoSummary, nameDifferences, tallyInjected, type FoundFinding } from '../../src/commands/demo-summary.js';
import type { AttemptRecord, ExpectedDiscrepancy, GroundTruth, Simulator } from '../../sim/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const missed = (order: string, fault: string, timingDependent = false): ExpectedDiscrepancy => ({
  kind: 'missed_webhook', status: timingDependent ? 'resolved' : 'open', environment: 'sandbox', entity_type: 'order', entity_id: order,
  subject: 'confirmed', external_reference_id: null, sepa_reference: null, expected: 'confirmed', observed: null, details: '', fault,
  ...(timingDependent ? { timing_dependent: true } : {}),
});

const truth = (discrepancies: ExpectedDiscrepancy[], reordered: string[] = []): GroundTruth => ({
  seed: 's', start_time: '', sim_time: '', discrepancies, rejected_deliveries: [], uncertain_deliveries: [],
  benign_faults: reordered.map((order) => ({ fault: 'reordered', environment: 'sandbox', entity_type: 'order', entity_id: order, topic: 'order/confirmed', details: '' })),
});

const payoutFinding = (kind: ExpectedDiscrepancy['kind'], payout: string): ExpectedDiscrepancy => ({
  kind, status: 'open', environment: 'sandbox', entity_type: 'payout', entity_id: payout, subject: 'PO2026010612345678',
  external_reference_id: null, sepa_reference: 'PO2026010612345678', expected: null, observed: null, details: '', fault: 'payout_duplicate_sepa',
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

  it('name a duplicate delivery not injected by the uncertain delivery it retried, and call another unexplained', () => {
    const dup: ExpectedDiscrepancy = { ...missed('o1', 'repeated'), kind: 'duplicate_delivery', entity_type: 'order', subject: 'k1', event_key: 'k1', delivery_number: 2 };
    const uncertain = { environment: 'sandbox' as const, topic: 'order/confirmed', entity_id: 'o9', event_key: 'k9', address: 'http://x', details: 'attempt 1 timed out' };
    const t = { ...truth([dup]), uncertain_deliveries: [uncertain] };
    const copy = (row: string, key: string, order: string): FoundFinding => ({ kind: 'duplicate_delivery', entity_type: 'webhook_delivery', entity_id: row, status: 'resolved', event_key: key, delivered_entity_id: order });
    const lines = nameDifferences(t, [copy('10', 'k1', 'o1'), copy('11', 'k9', 'o9'), copy('12', 'k8', 'o8')], [{ kind: 'duplicate_delivery', injected: 1, found: 3 }]);
    expect(lines[0]).toBe('  difference: duplicate_delivery found 3, injected 1:');
    expect(lines[1]).toMatch(/^    delivery of o8, event k8, copy 2 found, not injected: unexplained/);
    expect(lines[2]).toMatch(/^    delivery of o9, event k9, copy 2 found, not injected: a retry of an attempt that timed out or was answered 5xx/);
    expect(lines).toHaveLength(3);
  });

  // A ledger that stalled past the ack deadline (test/e2e/demo-ledger-stall.test.ts): the payout's
  // webhook was answered 503 and retried while a statement import brought its credit, and a pass
  // between saw the credit without a payout. Explained only when resolved, its payout's delivery
  // uncertain, and no event of the payout stored before the finding (late_payouts).
  it('name a credit flagged before its uncertain payout webhook was stored and resolved when it came, and call others unexplained', () => {
    const uncertain = { environment: 'sandbox' as const, topic: 'payout/complete', entity_id: 'p1', event_key: 'k1', address: 'http://x', details: 'attempt 1 answered 503' };
    const t = { ...truth([]), uncertain_deliveries: [uncertain] };
    const credit = (line: string, status: string, late: string[] | null): FoundFinding => ({ kind: 'statement_credit_without_payout', entity_type: 'statement_line', entity_id: line, status, late_payouts: late });
    // S2 still open; S3's payout was stored before the finding; S4's payout delivery was never uncertain.
    const f = [credit('S1', 'resolved', ['p1']), credit('S2', 'open', ['p1']), credit('S3', 'resolved', null), credit('S4', 'resolved', ['p9'])];
    const lines = nameDifferences(t, f, [{ kind: 'statement_credit_without_payout', injected: 0, found: 4 }]);
    expect(lines[0]).toBe('  difference: statement_credit_without_payout found 4, injected 0:');
    expect(lines.slice(1, 4).sort()).toEqual(['S2', 'S3', 'S4'].map((s) => `    statement_line ${s} found, not injected: unexplained by the ground truth (a defect: please report it with the seed)`));
    expect(lines[4]).toBe("    statement_line S1 found, not injected: a pass saw the credit before its payout's webhook was stored, and the finding was resolved when it came");
    expect(lines).toHaveLength(5);
  });

  // sim/README.md: "Match findings on (environment, kind, entity_type, entity_id)"; README: the final
  // summary names any difference. Equal counts must not hide a finding on the wrong entity.
  it('name a payout finding on the wrong payout even when the per-kind counts agree', () => {
    const t = truth([payoutFinding('duplicate_event', 'P-2')]);
    const found: FoundFinding[] = [{ kind: 'duplicate_event', entity_type: 'payout', entity_id: 'P-9', status: 'open', subject: 'PO2026010612345678' }];
    const lines = nameDifferences(t, found, compareTallies(tallyInjected(t), new Map([['duplicate_event', 1]])));
    expect(lines).toEqual([
      '  difference: duplicate_event found 1, injected 1:',
      '    payout P-2 (PO2026010612345678) injected (payout_duplicate_sepa), not found: unexplained by the ground truth (a defect: please report it with the seed)',
      '    payout P-9 (PO2026010612345678) found, not injected: unexplained by the ground truth (a defect: please report it with the seed)',
    ]);
  });

  it('match an invoice kind on its entity and the subject that tells its findings apart', () => {
    const deduction = (invoice: string, payout: string): ExpectedDiscrepancy => ({ ...payoutFinding('payout_deduction_mismatch', invoice), entity_type: 'invoice', subject: payout, fault: 'fee_overcharged' });
    const t = truth([deduction('I-1', 'P-1'), deduction('I-2', 'P-1')]);
    const found = (invoice: string, payout: string): FoundFinding => ({ kind: 'payout_deduction_mismatch', entity_type: 'invoice', entity_id: invoice, status: 'open', subject: payout });
    const tallies = compareTallies(tallyInjected(t), new Map([['payout_deduction_mismatch', 2]]));
    expect(nameDifferences(t, [found('I-1', 'P-1'), found('I-2', 'P-1')], tallies)).toEqual([]);
    expect(nameDifferences(t, [found('I-1', 'P-1'), found('I-2', 'P-2')], tallies)).toContain('    invoice I-2 (P-2) found, not injected: unexplained by the ground truth (a defect: please report it with the seed)');
  });

  it('name a short payout credit whose settlement window the statements do not cover yet, and only that', () => {
    const short = (payout: string, at: string): ExpectedDiscrepancy => ({
      ...payoutFinding('payout_amount_mismatch', payout), subject: '', fault: 'payout_amount_mismatch', expected: '10000', observed: '9000', payout_time: at,
    });
    const excess: ExpectedDiscrepancy = { ...payoutFinding('payout_amount_mismatch', 'P-3'), subject: '', fault: 'payout_amount_mismatch', expected: '10000', observed: '11000' };
    // P-4's window ends 2026-01-06 22:00, within the 4 hours a period must spare (payout-common.ts BANK_OFFSET_HOURS).
    const t = truth([short('P-1', '2026-01-05T10:00:00.000Z'), short('P-2', '2026-01-01T10:00:00.000Z'), short('P-4', '2026-01-03T22:00:00.000Z'), excess]);
    const tallies = compareTallies(tallyInjected(t), new Map());
    // The statements end on 2026-01-06: P-1's window (to 2026-01-08 10:00) is not covered, nor P-4's (to 2026-01-06 22:00), P-2's (to 2026-01-04) is.
    const lines = nameDifferences(t, [], tallies, { days: 3, statementsEnd: new Date('2026-01-06T23:59:59Z') });
    expect(lines).toEqual([
      '  difference: payout_amount_mismatch found 0, injected 4:',
      '    payout P-2 injected (payout_amount_mismatch), not found: unexplained by the ground truth (a defect: please report it with the seed)',
      '    payout P-3 injected (payout_amount_mismatch), not found: unexplained by the ground truth (a defect: please report it with the seed)',
      '    payout P-1 injected (payout_amount_mismatch), not found: its credit is short, judged once the statements cover PAYOUT_SETTLEMENT_DAYS (3) after the payout; the last imported one ends 2026-01-06T23:59:59.000Z',
      '    payout P-4 injected (payout_amount_mismatch), not found: its credit is short, judged once the statements cover PAYOUT_SETTLEMENT_DAYS (3) after the payout; the last imported one ends 2026-01-06T23:59:59.000Z',
    ]);
    // With no statement imported, no short credit can be judged; without the cover, none is explained.
    expect(nameDifferences(t, [], tallies, { days: 3, statementsEnd: undefined }).filter((l) => l.includes('unexplained'))).toHaveLength(1);
    expect(nameDifferences(t, [], tallies).filter((l) => l.includes('unexplained'))).toHaveLength(4);
  });

  it('explain a deducted buyer credit no pass saw, by the ledger\'s evidence, and only that one', () => {
    const buyer = (line: string, invoice: string): ExpectedDiscrepancy => ({
      kind: 'buyer_paid_merchant_directly', status: 'resolved', environment: 'sandbox', entity_type: 'statement_line', entity_id: line, subject: '',
      external_reference_id: invoice, sepa_reference: null, expected: null, observed: '484929', details: '', fault: 'buyer_paid_directly',
    });
    const t = truth([buyer('S1', 'INV-6'), buyer('S2', 'INV-50')]);
    const tallies = compareTallies(tallyInjected(t), new Map());
    const lines = nameDifferences(t, [], tallies, { days: 3, statementsEnd: undefined, deductedUnseen: new Set(['S1']) });
    expect(lines).toContain('    statement_line S1 injected (buyer_paid_directly), not found: a payout report deducting its buyer payment was imported before any pass saw the credit, so there was nothing to report');
    expect(lines).toContain('    statement_line S2 injected (buyer_paid_directly), not found: unexplained by the ground truth (a defect: please report it with the seed)');
  });

  it('name the kinds a demo cannot show by the setting that needs days', () => {
    const invoice: ExpectedDiscrepancy = { ...missed('i1', 'invoice_not_paid_out'), kind: 'invoice_not_paid_out', entity_type: 'invoice' };
    expect(differences(truth([invoice]), [])).toEqual(['  difference: invoice_not_paid_out 1 not found: it needs INVOICE_PAYOUT_DAYS of real time, longer than a demo']);
  });
});

const attempt = (eventKey: string, status: number, variant = 'original'): AttemptRecord => ({
  env: 'sandbox', seq: 0, topic: 'invoice/payment', variant, eventKey, address: 'http://127.0.0.1:1/webhooks', attempt: 1, simAt: 0, status, error: null,
});

/** Only what demoSummary reads of the simulator. */
function fakeSim(t: GroundTruth, attempts: AttemptRecord[]): Simulator {
  const stats = { planned: attempts.length, unrouted: 0, attempted: attempts.length, succeeded: attempts.filter((a) => a.status === 200).length, failed: 0, gaveUp: 0, pending: 0, inFlight: 0, events: attempts.length, simTime: '2026-01-06T00:00:00.000Z', orders: { sandbox: 0, production: 0 } };
  return { groundTruth: () => t, attempts: () => attempts, stats: () => stats } as unknown as Simulator;
}

describe("the demo's summary against the simulator's record of its deliveries", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('demo_summary');
  });
  afterAll(async () => {
    await db?.close();
  });

  it('counts deliveries answered 2xx that are not in webhook_deliveries, and calls them a difference', async () => {
    // Three invoice events answered 200 (one of them twice), none stored: three acknowledged deliveries lost.
    const sim = fakeSim(truth([]), [attempt('k1', 200), attempt('k2', 200), attempt('k3', 200), attempt('k3', 200)]);
    const { text, defect } = await demoSummary(db, sim, 0, 10, 3, undefined, true);
    expect(text).toContain('acknowledged (2xx) but not stored 3,');
    expect(text).toMatch(/difference: 3 deliveries answered 2xx are not in webhook_deliveries \(event keys k1, k2, k3\)/);
    expect(text).not.toContain('every delivery answered 2xx is stored');
    expect(defect).toBe(true);
  });

  it('finds nothing lost when every delivery answered 2xx is stored', async () => {
    await db.sql`insert into webhook_deliveries (delivery_uuid, environment, headers, raw_body, signature_valid, parse_status, event_key)
      values (gen_random_uuid(), 'sandbox', '{}'::jsonb, '\\x7b7d'::bytea, true, 'parsed', 'stored-key')`;
    const { text, defect } = await demoSummary(db, fakeSim(truth([]), [attempt('stored-key', 200)]), 0, 10, 3, undefined, true);
    expect(text).toContain('acknowledged (2xx) but not stored 0,');
    expect(text).toContain('every delivery answered 2xx is stored and every finding matches one injected');
    expect(defect).toBe(false);
  });

  it('calls a delivery the simulator gave up on, refused and not stored, a difference and a defect once settled', async () => {
    // A correctly signed delivery answered 403 at every attempt (an allow-list that leaves the
    // simulator out), and one answered 503 then 200: only the first is a difference.
    const attempts = [attempt('k403', 403), attempt('k403', 403), attempt('k503', 503), attempt('k503', 200), attempt('stored-key', 200)];
    const settled = await demoSummary(db, fakeSim(truth([]), attempts), 0, 10, 3, undefined, true);
    expect(settled.text).toContain('difference: 1 deliveries the simulator gave up on were never answered 2xx and are not stored (answers: 403 x2; event keys k403)');
    // k503 was answered 200 in the end: not given up (not stored here, so it counts as lost instead).
    expect(settled.text.split('\n').find((l) => l.includes('gave up'))).not.toContain('k503');
    expect(settled.defect).toBe(true);
    // While the demo runs, a refused delivery may still be retried: not yet a difference.
    const running = await demoSummary(db, fakeSim(truth([]), attempts.slice(0, 2)), 0, 10, 3, undefined, false);
    expect(running.text).not.toContain('gave up');
  });

  it('calls a 401 to a correctly signed delivery a difference, not "as expected"', async () => {
    // One injected wrong-key copy refused (right) and one genuine, correctly signed delivery refused (wrong).
    const rejected = [{ environment: 'sandbox' as const, signed_with: 'production' as const, topic: 'order/confirmed', entity_type: 'order', entity_id: 'o1', event_key: 'k1', details: '' }];
    const { text, defect } = await demoSummary(db, fakeSim({ ...truth([]), rejected_deliveries: rejected }, [attempt('k1', 401, 'wrong_secret'), attempt('k2', 401, 'original')]), 2, 10, 3, undefined, true);
    expect(text).toContain('1 correctly signed deliveries answered 401: a difference');
    expect(text).not.toContain('as expected');
    expect(defect).toBe(true);
  });

  it('calls a wrong-key copy answered 2xx a difference, and every 401 on a wrong-key copy none', async () => {
    const { text: forged, defect: forgedDefect } = await demoSummary(db, fakeSim(truth([]), [attempt('k1', 200, 'wrong_secret')]), 0, 10, 3, undefined, false);
    expect(forged).toContain('1 copies signed with the wrong key answered 2xx: a difference');
    const { text: right, defect: rightDefect } = await demoSummary(db, fakeSim(truth([]), [attempt('k1', 401, 'wrong_secret'), attempt('k1', 401, 'wrong_secret')]), 2, 10, 3, undefined, false);
    expect(right).toContain('every refusal one of them, none of them accepted');
    expect(right).not.toContain('difference');
    expect(forgedDefect).toBe(true);
    expect(rightDefect).toBe(false);
  });

  // Last: it stores a statement, which the tests above do not expect.
  it('names a short payout credit by the imported statements\' end, read from the ledger', async () => {
    const short = (payout: string, at: string): ExpectedDiscrepancy => ({
      ...payoutFinding('payout_amount_mismatch', payout), subject: '', fault: 'payout_amount_mismatch', expected: '10000', observed: '9000', payout_time: at,
    });
    const [statement] = await db.sql<{ id: string }[]>`
      insert into bank_statements (environment, file_sha256, format, line_count) values ('sandbox', 'demo-summary', 'camt053', 0) returning id`;
    await db.sql`
      insert into statement_periods (statement_id, section_index, environment, period_from, period_to)
      values (${statement!.id}, 0, 'sandbox', '2025-12-01T00:00:00Z', '2026-01-06T23:59:59Z')`;
    const { text, defect } = await demoSummary(db, fakeSim(truth([short('P-1', '2026-01-05T10:00:00.000Z'), short('P-2', '2026-01-01T10:00:00.000Z')]), []), 0, 10, 3, undefined, true);
    expect(text).toContain('    payout P-1 injected (payout_amount_mismatch), not found: its credit is short, judged once the statements cover PAYOUT_SETTLEMENT_DAYS (3) after the payout; the last imported one ends 2026-01-06T23:59:59.000Z');
    expect(text).toContain('    payout P-2 injected (payout_amount_mismatch), not found: unexplained by the ground truth (a defect: please report it with the seed)');
    expect(defect).toBe(true);
  });
});
