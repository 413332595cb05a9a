import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { acknowledgeDiscrepancy } from '../../src/reconcile/ack.js';
import { INVOICE_EVIDENCE_KINDS, PAYOUT_EVIDENCE_KINDS } from '../../src/reconcile/invoice-scope.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { GRACE, at, discrepancies, eventTime, orderEvent, pass, pollRun, retryOf, snapshot } from './fixtures.js';
import { databasePerTest } from './helpers.js';
import { Writable } from 'node:stream';
import { streamDiscrepancies } from '../../src/reports/discrepancies.js';
import type { TestDatabase } from '../helpers/database.js';

const withDb = databasePerTest('lifecycle');

/** Every kind at once, so the idempotency check covers every statement. */
async function mixedLedger(db: TestDatabase): Promise<void> {
  const run = await pollRun(db, at(0));
  const missed = randomUUID();
  const mismatch = randomUUID();
  const dup = randomUUID();
  await snapshot(db, { order: missed, state: 'confirmed', seenAt: at(0), runId: run });
  await snapshot(db, { order: mismatch, state: 'confirmed', seenAt: at(0), runId: run });
  await orderEvent(db, { order: mismatch, state: 'confirmed', eventTime: eventTime(-20), receivedAt: at(-19) });
  await orderEvent(db, { order: mismatch, state: 'declined', eventTime: eventTime(-10), receivedAt: at(-9) });
  await snapshot(db, { order: dup, state: 'authorized', seenAt: at(0), runId: run });
  const e = await orderEvent(db, { order: dup, state: 'authorized', eventTime: eventTime(-20), receivedAt: at(-19) });
  await orderEvent(db, { order: dup, state: 'authorized', eventTime: eventTime(-15), receivedAt: at(-14) });
  await retryOf(db, e.eventKey, at(-1));
  await orderEvent(db, { order: randomUUID(), state: 'confirmed', eventTime: eventTime(-30), receivedAt: at(-29) });
  await pollRun(db, at(GRACE + 10));
  // The later run listed the known orders.
  for (const order of [missed, mismatch, dup]) await db.sql`update order_snapshots set last_seen_run_id = last_seen_run_id + 1 where order_uuid = ${order}`;
}

/** The discrepancy report as the command and the API give it. */
async function reportRows(db: TestDatabase): Promise<{ kind: string; status: string; last_checked_at: string }[]> {
  const chunks: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => { chunks.push(chunk.toString('utf8')); done(); } });
  await streamDiscrepancies(db, { status: 'all' }, 'json', sink);
  return JSON.parse(chunks.join('')) as { kind: string; status: string; last_checked_at: string }[];
}

describe('discrepancy lifecycle', () => {
  it('a second pass with nothing new writes no finding, and the report shows them checked by it', withDb(async (db) => {
    await mixedLedger(db);
    const first = await pass(db, at(2 * GRACE));
    expect(first.found).toMatchObject({ missed_webhook: 1, state_mismatch: 1, orphan_webhook: 1, duplicate_event: 1 });
    expect(first.opened).toBe(4);
    expect(first.duplicateDeliveries).toBe(1);
    // xmin: the transaction that wrote the row version, so a rewrite with equal values shows too.
    const dump = () => db.sql`select xmin::text as version, id, kind, status, entity_id, subject, expected, observed, details, evidence,
                                     evidence_hash, first_detected_at, last_checked_at, resolved_at, acknowledged_at from discrepancies order by id`;
    const before = await dump();
    const [h1] = await db.sql<{ n: number }[]>`select count(*)::int as n from discrepancy_history`;
    const second = await pass(db, at(2 * GRACE + 300));
    expect(second).toMatchObject({ mode: 'incremental', opened: 0, reopened: 0, resolved: 0, duplicateDeliveries: 0 });
    expect(await dump()).toEqual(before);
    const [h2] = await db.sql<{ n: number }[]>`select count(*)::int as n from discrepancy_history`;
    expect(h2?.n).toBe(h1?.n);
    const checked = (await reportRows(db)).filter((r) => r.status !== 'resolved').map((r) => r.last_checked_at);
    expect(checked).toEqual(Array(4).fill(at(2 * GRACE + 300).toISOString().replace('.000Z', 'Z')));
    // The duplicate delivery is a fact recorded once, resolved: it keeps the time it was recorded.
    const resolved = (await reportRows(db)).filter((r) => r.status === 'resolved');
    expect(resolved.map((r) => [r.kind, r.last_checked_at])).toEqual([['duplicate_delivery', at(2 * GRACE).toISOString().replace('.000Z', 'Z')]]);
    const runs = await db.sql<{ status: string }[]>`select status from reconcile_runs order by id`;
    expect(runs.map((r) => r.status)).toEqual(['complete', 'complete']);
  }));

  it('writes a finding whose evidence changed, and only that one', withDb(async (db) => {
    await mixedLedger(db);
    await pass(db, at(2 * GRACE));
    const versions = async () => new Map((await db.sql<{ kind: string; version: string }[]>`
      select kind::text as kind, xmin::text as version from discrepancies where status = 'open'`).map((r) => [r.kind, r.version]));
    const before = await versions();
    const [missed] = await discrepancies(db, 'missed_webhook');
    // The poller sees the missed order move on to canceled, inside the grace period: the finding
    // about confirmed stands (its webhook never came), and its evidence now names the API's state.
    // (The fixture's first sighting is also an observation of confirmed, which the poller keeps.)
    await db.sql`update order_snapshots set state = 'canceled', state_since = ${at(2 * GRACE + 200).toISOString()}::timestamptz
                 where order_uuid = ${missed!.entity_id}::uuid`;
    await pass(db, at(2 * GRACE + 300));
    const after = await versions();
    const changed = [...after].filter(([kind, version]) => before.get(kind) !== version).map(([kind]) => kind);
    expect(changed).toEqual(['missed_webhook']);
    const [evidence] = await db.sql<{ api_state: string; checked_by_second: boolean }[]>`
      select evidence->>'api_state' as api_state, last_checked_at = ${at(2 * GRACE + 300).toISOString()}::timestamptz as checked_by_second
      from discrepancies where id = ${missed!.id}`;
    expect(evidence).toEqual({ api_state: 'canceled', checked_by_second: true });
  }));

  it('marks a run left running by a process that died mid-pass as failed, and is not misled by it', withDb(async (db) => {
    await mixedLedger(db);
    // A crashed pass: its row says running, and it never completed, so the next pass is full.
    await db.sql`insert into reconcile_runs (environment, started_at) values ('sandbox', ${at(GRACE).toISOString()}::timestamptz)`;
    const next = await pass(db, at(2 * GRACE));
    expect(next.mode).toBe('full');
    const runs = await db.sql<{ status: string; error: string | null }[]>`select status, error from reconcile_runs order by id`;
    expect(runs.map((r) => r.status)).toEqual(['failed', 'complete']);
    expect(runs[0]?.error).toMatch(/ended before the pass finished/);
  }));

  it('an incremental pass reaches what a full pass reaches as evidence arrives and time passes', withDb(async (db) => {
    await mixedLedger(db);
    expect((await pass(db, at(2 * GRACE))).mode).toBe('full');
    // Later: a late webhook for the missed order, a new order crossing its grace period, a new
    // complete poll that no longer lists a known order, and an orphan that the poll now lists.
    const [missed] = await discrepancies(db, 'missed_webhook');
    await orderEvent(db, { order: missed!.entity_id, state: 'confirmed', eventTime: eventTime(-50), receivedAt: at(2 * GRACE + 100) });
    const fresh = randomUUID();
    const gone = randomUUID();
    const early = await pollRun(db, at(2 * GRACE + 200));
    await snapshot(db, { order: fresh, state: 'pending', seenAt: at(2 * GRACE + 200), runId: early });
    await snapshot(db, { order: gone, state: 'authorized', seenAt: at(2 * GRACE + 200), runId: early });
    await orderEvent(db, { order: gone, state: 'authorized', eventTime: eventTime(2 * GRACE + 150), receivedAt: at(2 * GRACE + 160) });
    const [orphan] = await discrepancies(db, 'orphan_webhook');
    const later = await pollRun(db, at(4 * GRACE));
    await snapshot(db, { order: orphan!.entity_id, state: 'confirmed', seenAt: at(4 * GRACE), runId: later });
    await db.sql`update order_snapshots set last_seen_run_id = ${later} where order_uuid <> ${gone}`;
    const incremental = await pass(db, at(5 * GRACE));
    expect(incremental.mode).toBe('incremental');
    expect(incremental.scopeOrders).toBeGreaterThan(0);
    const after = (await discrepancies(db)).map((r) => [r.kind, r.entity_id, r.status]);
    expect(after).toContainEqual(['missed_webhook', missed!.entity_id, 'resolved']);
    expect(after).toContainEqual(['orphan_webhook', orphan!.entity_id, 'resolved']);
    expect(after).toContainEqual(['missed_webhook', fresh, 'open']);
    expect(after).toContainEqual(['orphan_webhook', gone, 'open']);
    // A full pass right after finds nothing the incremental one missed.
    const full = await pass(db, at(5 * GRACE + 10), 'sandbox', { full: true });
    expect(full).toMatchObject({ mode: 'full', opened: 0, reopened: 0, resolved: 0 });
    // The ledger holds no invoice, payout or statement evidence: the incremental pass left those kinds as they stood.
    expect(incremental.invoices).toMatchObject({ judged: false });
    expect(incremental.payouts).toMatchObject({ judged: false });
    const judged = Object.fromEntries(Object.entries(full.found).filter(([kind]) => kind in incremental.found));
    expect(judged).toEqual(incremental.found);
    const standing = Object.keys(full.found).filter((kind) => !(kind in incremental.found));
    // Without CONTRACT_TERMS deductions are judged by no pass, full or not: that kind stands in both.
    expect('payout_deduction_mismatch' in full.found).toBe(false);
    expect(standing.sort()).toEqual([...INVOICE_EVIDENCE_KINDS, ...PAYOUT_EVIDENCE_KINDS].filter((kind) => kind !== 'payout_deduction_mismatch').sort());
    expect(standing.map((kind) => full.found[kind])).toEqual(standing.map(() => 0));
  }));

  it('reads the orders a poll did not list only while that poll is new to the passes, and still finds what a full pass finds', withDb(async (db) => {
    // R1 lists A. B's webhook came long before R1 (R1 proves B an orphan). C was listed by R0, not by
    // R1, and its webhook came within the grace period before R1 started (R1 proves nothing about C).
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const r0 = await pollRun(db, at(3 * GRACE - 50));
    await snapshot(db, { order: c, state: 'confirmed', seenAt: at(3 * GRACE - 50), runId: r0 });
    const r1 = await pollRun(db, at(3 * GRACE));
    await snapshot(db, { order: a, state: 'confirmed', seenAt: at(3 * GRACE), runId: r1 });
    await orderEvent(db, { order: a, state: 'confirmed', eventTime: eventTime(3 * GRACE - 300), receivedAt: at(3 * GRACE - 290) });
    await orderEvent(db, { order: b, state: 'confirmed', eventTime: eventTime(-10), receivedAt: at(0) });
    await orderEvent(db, { order: c, state: 'confirmed', eventTime: eventTime(3 * GRACE - 110), receivedAt: at(3 * GRACE - 100) });
    // Late enough that C's webhook is older than the next pass's lookback (grace and margin).
    const first = await pass(db, at(5 * GRACE));
    expect(first.mode).toBe('full');
    expect((await discrepancies(db, 'orphan_webhook')).map((d) => d.entity_id)).toEqual([b]);
    // R1 is the poll the first pass judged with: C (unlisted, nothing new) stays out, and so does B,
    // whose open finding has nothing new either (it stands); A is in by its snapshot's state in the lookback.
    const second = await pass(db, at(5 * GRACE + 100));
    expect(second).toMatchObject({ mode: 'incremental', scopeOrders: 1, opened: 0, resolved: 0 });
    expect((await discrepancies(db, 'orphan_webhook')).map((d) => [d.entity_id, d.status])).toEqual([[b, 'open']]);
    // R2 is new to the passes and does not list C either; it started more than the grace period
    // after C's webhook, so it proves C an orphan: the next pass reads the orders R2 did not list.
    const r2 = await pollRun(db, at(5 * GRACE + 200));
    await snapshot(db, { order: a, state: 'confirmed', seenAt: at(5 * GRACE + 200), runId: r2 });
    const third = await pass(db, at(5 * GRACE + 400));
    expect(third).toMatchObject({ mode: 'incremental', opened: 1, resolved: 0 });
    expect((await discrepancies(db, 'orphan_webhook')).map((d) => d.entity_id).sort()).toEqual([b, c].sort());
    const before = await discrepancies(db);
    const full = await pass(db, at(5 * GRACE + 500), 'sandbox', { full: true });
    expect(full).toMatchObject({ mode: 'full', opened: 0, reopened: 0, resolved: 0 });
    expect(await discrepancies(db)).toEqual(before);
    // R3 lists C again, in the state R0 saw (nothing else new about C): its orphan finding goes with
    // the next incremental pass; B, still unlisted, stays an orphan.
    const r3 = await pollRun(db, at(5 * GRACE + 600));
    for (const order of [a, c]) await snapshot(db, { order, state: 'confirmed', seenAt: at(5 * GRACE + 600), runId: r3 });
    const fourth = await pass(db, at(5 * GRACE + 700));
    expect(fourth).toMatchObject({ mode: 'incremental', opened: 0, resolved: 1 });
    expect((await discrepancies(db, 'orphan_webhook')).map((d) => [d.entity_id, d.status]).sort()).toEqual([[b, 'open'], [c, 'resolved']].sort());
  }));

  it('an acknowledged discrepancy keeps its note and is reopened only when its evidence changes', withDb(async (db) => {
    const order = randomUUID();
    const run = await pollRun(db, at(0));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: run });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-20), receivedAt: at(-19) });
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-10), receivedAt: at(-9) });
    await pass(db, at(10));
    const [d] = await discrepancies(db, 'duplicate_event');
    expect(await acknowledgeDiscrepancy(db, 999_999, 'x', 'alice')).toEqual({ outcome: 'not_found' });
    const ack = await acknowledgeDiscrepancy(db, d!.id, 'provider confirmed twice; harmless', 'alice');
    expect(ack).toMatchObject({ outcome: 'acknowledged', discrepancy: { id: d!.id, acknowledgedBy: 'operator:alice', note: 'provider confirmed twice; harmless' } });

    await pass(db, at(20));
    expect(await discrepancies(db, 'duplicate_event')).toMatchObject([{ status: 'acknowledged' }]);

    // A third claimant is new evidence: back to open, with history.
    await orderEvent(db, { order, state: 'confirmed', eventTime: eventTime(-5), receivedAt: at(25) });
    const summary = await pass(db, at(30));
    expect(summary.reopened).toBe(1);
    expect(await discrepancies(db, 'duplicate_event')).toMatchObject([{ status: 'open', observed: '3' }]);
    const history = await db.sql<{ from_status: string | null; to_status: string; actor: string; reason: string }[]>`
      select from_status::text, to_status::text, actor, reason from discrepancy_history where discrepancy_id = ${d!.id} order by id`;
    expect(history).toEqual([
      { from_status: null, to_status: 'open', actor: 'reconciler', reason: 'detected' },
      { from_status: 'open', to_status: 'acknowledged', actor: 'operator:alice', reason: 'provider confirmed twice; harmless' },
      { from_status: 'acknowledged', to_status: 'open', actor: 'reconciler', reason: 'evidence changed since it was acknowledged' },
    ]);
    const [row] = await db.sql<{ ack_note: string }[]>`select ack_note from discrepancies where id = ${d!.id}`;
    expect(row?.ack_note).toBe('provider confirmed twice; harmless');
  }));

  it('never mixes environments', withDb(async (db) => {
    const order = randomUUID();
    // The API of production shows the order confirmed; the confirmed webhook came from sandbox.
    const prodRun = await pollRun(db, at(0), 'complete', 'production');
    await snapshot(db, { env: 'production', order, state: 'confirmed', seenAt: at(0), runId: prodRun });
    await orderEvent(db, { env: 'sandbox', order, state: 'confirmed', eventTime: eventTime(-10), receivedAt: at(-9) });
    await pollRun(db, at(GRACE + 10), 'complete', 'sandbox');
    await pass(db, at(2 * GRACE), 'production');
    expect(await discrepancies(db)).toMatchObject([{ environment: 'production', kind: 'missed_webhook', entity_id: order }]);
    await pass(db, at(2 * GRACE), 'sandbox');
    const rows = await discrepancies(db);
    expect(rows.map((r) => [r.environment, r.kind, r.status])).toEqual([
      ['production', 'missed_webhook', 'open'],
      ['sandbox', 'orphan_webhook', 'open'],
    ]);
  }));

  it('skips the pass while another replica holds the lock', withDb(async (db) => {
    const other = await db.sql.reserve();
    try {
      await other`select pg_advisory_lock(${lockKey('reconcile', 'sandbox').toString()}::bigint)`;
      const skipped = await pass(db, at(0));
      expect(skipped.skipped).toBe(true);
      // Production has its own lock.
      expect((await pass(db, at(0), 'production')).skipped).toBe(false);
      await other`select pg_advisory_unlock(${lockKey('reconcile', 'sandbox').toString()}::bigint)`;
    } finally {
      other.release();
    }
    expect((await pass(db, at(0))).skipped).toBe(false);
    const runs = await db.sql<{ environment: string }[]>`select environment::text from reconcile_runs order by id`;
    expect(runs.map((r) => r.environment)).toEqual(['production', 'sandbox']);
  }));
});
