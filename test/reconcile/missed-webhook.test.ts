import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GRACE, at, discrepancies, eventTime, orderEvent, pass, pollRun, snapshot } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('missed_webhook');

describe('missed_webhook', () => {
  it('fires once the grace period has passed with no webhook for the state the API shows', withDb(async (db) => {
    const order = randomUUID();
    const run = await pollRun(db, at(0));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: run, externalReferenceId: 'ext-1' });

    // Near miss: one minute before the grace period ends the provider may still be retrying.
    await pass(db, at(GRACE - 60));
    expect(await discrepancies(db, 'missed_webhook')).toEqual([]);

    const summary = await pass(db, at(GRACE + 1));
    expect(summary.opened).toBe(1);
    const rows = await discrepancies(db, 'missed_webhook');
    expect(rows).toMatchObject([{ status: 'open', entity_type: 'order', entity_id: order, subject: 'confirmed', expected: 'confirmed' }]);
  }));

  it('does not fire for a late delivery that arrived before the pass, and resolves when the webhook comes', withDb(async (db) => {
    const late = randomUUID();
    const lost = randomUUID();
    const run = await pollRun(db, at(0));
    await snapshot(db, { order: late, state: 'pending', seenAt: at(0), runId: run });
    await snapshot(db, { order: lost, state: 'authorized', seenAt: at(0), runId: run });
    // Delivered after the grace period ended but before the pass ran: not a problem.
    await orderEvent(db, { order: late, state: 'pending', eventTime: eventTime(-5), receivedAt: at(GRACE + 100) });
    await pass(db, at(GRACE + 200));
    const rows = await discrepancies(db, 'missed_webhook');
    expect(rows.map((r) => r.entity_id)).toEqual([lost]);

    // The lost one turns up much later: resolved by the machine, with the evidence in history.
    await orderEvent(db, { order: lost, state: 'authorized', eventTime: eventTime(-5), receivedAt: at(3 * GRACE) });
    const summary = await pass(db, at(3 * GRACE + 10));
    expect(summary.resolved).toBe(1);
    const [row] = await db.sql<{ status: string; resolved_at: Date | null }[]>`select status::text, resolved_at from discrepancies where entity_id = ${lost}`;
    expect(row).toMatchObject({ status: 'resolved' });
    expect(row?.resolved_at).not.toBeNull();
    const history = await db.sql<{ from_status: string | null; to_status: string; actor: string; reason: string; evidence: { webhook: { event_key: string } } }[]>`
      select h.from_status::text, h.to_status::text, h.actor, h.reason, h.evidence from discrepancy_history h
      join discrepancies d on d.id = h.discrepancy_id where d.entity_id = ${lost} order by h.id`;
    expect(history.map((h) => [h.from_status, h.to_status, h.actor])).toEqual([[null, 'open', 'reconciler'], ['open', 'resolved', 'reconciler']]);
    expect(history[1]?.reason).toBe('the webhook arrived');
    expect(history[1]?.evidence.webhook.event_key).toMatch(/^[0-9a-f]{64}$/);
  }));

  it('never fires for a state without a topic, nor for an intermediate state the poller never saw', withDb(async (db) => {
    const shipped = randomUUID();
    const skipped = randomUUID();
    const run = await pollRun(db, at(0));
    await snapshot(db, { order: shipped, state: 'shipped', seenAt: at(0), runId: run });
    await orderEvent(db, { order: shipped, state: 'confirmed', eventTime: eventTime(-100), receivedAt: at(-99) });
    // authorized was never seen by the poller and never delivered: we cannot know it was skipped or lost.
    await snapshot(db, { order: skipped, state: 'confirmed', seenAt: at(0), runId: run });
    await orderEvent(db, { order: skipped, state: 'confirmed', eventTime: eventTime(-10), receivedAt: at(-9) });
    await pass(db, at(10 * GRACE));
    expect(await discrepancies(db)).toEqual([]);
  }));

  it('keeps a lost webhook of a state the poller saw before the order moved on', withDb(async (db) => {
    const order = randomUUID();
    const r1 = await pollRun(db, at(0));
    await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: r1 });
    const r2 = await pollRun(db, at(600));
    await snapshot(db, { order, state: 'canceled', seenAt: at(600), runId: r2 });
    await orderEvent(db, { order, state: 'canceled', eventTime: eventTime(590), receivedAt: at(591) });
    await pass(db, at(2 * GRACE));
    expect(await discrepancies(db)).toMatchObject([{ kind: 'missed_webhook', entity_id: order, subject: 'confirmed' }]);
  }));
});
