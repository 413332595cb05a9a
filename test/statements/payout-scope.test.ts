import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { findings, importCsv, OTHER_IBAN, pass, payoutEvent } from './fixtures.js';
import { PAYOUT_EVIDENCE_KINDS } from '../../src/reconcile/invoice-scope.js';
import type { PassSummary } from '../../src/reconcile/types.js';
import { DAY, HOUR, MINUTE, realClock } from '../helpers/real-clock.js';

// Statements are stamped with the database's clock as they are stored, so the passes run on the
// real clock (T0 = now), moved forward by hours: a full pass comes every 24 h.
const { at, iso, day } = realClock();

/** Every payout kind's findings, and duplicate_event's (of payouts, here), for comparing what passes left. */
async function payoutFindings(d: TestDatabase) {
  return Object.fromEntries(await Promise.all([...PAYOUT_EVIDENCE_KINDS, 'duplicate_event'].map(async (kind) => [kind, await findings(d, kind)] as const)));
}

describe('an incremental pass judges the payout kinds again only when their evidence changed', () => {
  let d: TestDatabase;
  let p1: string;
  let p2: string;
  let p3: string;
  beforeAll(async () => {
    d = await createTestDatabase('stmt_payout_scope');
    // P1 completed ten days ago and the bank credited less than it said. P2's settlement deadline
    // (3 days) falls at T0 + 4 h, and no credit carries its reference. The statement covers both
    // windows (its booking days run from T0 - 12 days to T0 + 2 days).
    p1 = await payoutEvent(d, { sepa: 'PO2026000000000001', cents: 10_000n, eventTime: iso(-10 * DAY) });
    p2 = await payoutEvent(d, { sepa: 'PO2026000000000002', cents: 20_000n, eventTime: iso(-3 * DAY + 4 * HOUR) });
    // P3 claims P2's SEPA reference a day later: duplicate_event, which reads payout events alone.
    p3 = await payoutEvent(d, { sepa: 'PO2026000000000002', cents: 20_000n, eventTime: iso(-2 * DAY) });
    await importCsv(d, [
      { ref: 'S1', date: day(-12 * DAY), cents: 1_000n, sepa: 'RF000000000001', iban: OTHER_IBAN },
      { ref: 'S2', date: day(-9 * DAY), cents: 9_000n, sepa: 'PO2026000000000001' },
      { ref: 'S3', date: day(2 * DAY), cents: -500n, sepa: 'RF000000000002', iban: OTHER_IBAN },
    ]);
  });

  const judged = (summary: PassSummary) => summary.payouts;

  it('stands unchanged, or judges again naming what changed, and ends where a full pass does', async () => {
    const first = await pass(d, at(0));
    expect(first).toMatchObject({ mode: 'full', payouts: { judged: true } });
    expect((await findings(d, 'payout_amount_mismatch')).map((f) => [f.entity_id, f.status])).toEqual([[p1, 'open']]);
    expect(await findings(d, 'payout_not_on_statement')).toEqual([]);
    expect((await findings(d, 'duplicate_event')).map((f) => [f.entity_id, f.status])).toEqual([[p3, 'open']]);
    expect(first.found.duplicate_event).toBe(1);

    // The statement was stored within the margin before the first pass began.
    expect(judged(await pass(d, at(2 * HOUR)))).toEqual({ judged: true, reason: 'a bank statement was imported' });
    const before = await payoutFindings(d);
    const quiet = await pass(d, at(2 * HOUR + MINUTE));
    expect(quiet).toMatchObject({ mode: 'incremental', payouts: { judged: false }, opened: 0, reopened: 0, resolved: 0 });
    for (const kind of PAYOUT_EVIDENCE_KINDS) expect(quiet.found[kind]).toBeUndefined();
    // duplicate_event is judged for the orders of the scope (none), its payout findings stand.
    expect(quiet.found.duplicate_event).toBe(0);
    expect(await payoutFindings(d)).toEqual(before);
    expect(judged(await pass(d, at(3 * HOUR)))).toMatchObject({ judged: false });

    // P2's deadline falls: judged again, and P2 is flagged.
    const due = await pass(d, at(4 * HOUR + MINUTE));
    expect(judged(due)).toEqual({ judged: true, reason: 'a payout reached its settlement deadline' });
    expect((await findings(d, 'payout_not_on_statement')).map((f) => [f.entity_id, f.status])).toEqual([[p2, 'open']]);

    // P1 is cancelled: its mismatch resolves, and the credit it got is now the cancelled payout's.
    await payoutEvent(d, { uuid: p1, status: 'cancelled', sepa: 'PO2026000000000001', cents: 10_000n, eventTime: iso(4 * HOUR + 2 * MINUTE) });
    const cancelled = await pass(d, at(4 * HOUR + 3 * MINUTE));
    expect(judged(cancelled)).toEqual({ judged: true, reason: 'a payout event arrived' });
    expect((await findings(d, 'payout_amount_mismatch')).map((f) => f.status)).toEqual(['resolved']);
    expect((await findings(d, 'payout_cancelled_but_credited')).map((f) => [f.entity_id, f.status])).toEqual([[p1, 'open']]);
    expect(cancelled.found.duplicate_event).toBe(1);
    expect((await findings(d, 'duplicate_event')).map((f) => [f.entity_id, f.status])).toEqual([[p3, 'open']]);

    // Other settings: judged again, and again when they change back.
    expect(judged(await pass(d, at(6 * HOUR), { days: 2 }))).toEqual({ judged: true, reason: 'the previous pass judged the payouts with other settings' });
    expect(judged(await pass(d, at(6 * HOUR + MINUTE)))).toMatchObject({ judged: true });
    expect(judged(await pass(d, at(8 * HOUR)))).toMatchObject({ judged: false });

    // A full pass right after changes nothing the incremental ones left.
    const settled = await payoutFindings(d);
    const full = await pass(d, at(8 * HOUR + MINUTE), { full: true });
    expect(full).toMatchObject({ mode: 'full', opened: 0, reopened: 0, resolved: 0 });
    expect(await payoutFindings(d)).toEqual(settled);
  });

  it('names the four payout kinds, and none the invoice rules judge', () => {
    expect([...PAYOUT_EVIDENCE_KINDS].sort()).toEqual(['payout_amount_mismatch', 'payout_cancelled_but_credited', 'payout_not_on_statement', 'statement_credit_without_payout']);
  });
});
