import { describe, expect, it } from 'vitest';
import { abandonStaleRuns, startRun } from '../../src/jobs/runs.js';
import { databasePerTest } from './helpers.js';
import { orderEvent, pass } from './fixtures.js';

// Reparse runs are stamped with the database's clock, so these passes run on the real clock.
const now = (aheadMs = 0) => new Date(Date.now() + aheadMs);
const eventTimeOf = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
const withDatabase = databasePerTest('full_pass_reasons');

describe('an incremental pass becomes full when what it cannot see may have changed', () => {
  it('after a reparse whose process died: the run closed as aborted records no outcomes, and its committed batches still count', withDatabase(async (d) => {
    await orderEvent(d, { order: '00000000-0000-4000-8000-000000000001', state: 'pending', eventTime: eventTimeOf(now(-60_000)), receivedAt: now(-60_000) });
    expect((await pass(d, now())).mode).toBe('full');
    expect((await pass(d, now(1_000))).mode).toBe('incremental');
    // A reparse run left running by a process that died, then closed by the next reparse to start.
    await startRun(d.sql, 'reparse_runs', 'sandbox', { trigger: 'command', status_filter: 'unparsed', parser_version: 1 });
    const running = await pass(d, now(2_000));
    expect(running.mode).toBe('full');
    expect(await abandonStaleRuns(d.sql, 'reparse_runs', 'sandbox')).toBe(1);
    const [run] = await d.sql`select status, outcomes from reparse_runs`;
    expect(run).toEqual({ status: 'aborted', outcomes: null });
    // The pass that saw it running may have begun before its last batch committed.
    const after = await pass(d, now(3_000));
    expect(after).toMatchObject({ mode: 'full' });
    // Until the previous pass began more than the skew allowance (60 s) after it ended.
    expect((await pass(d, now(120_000))).mode).toBe('full');
    expect((await pass(d, now(180_000))).mode).toBe('incremental');
  }));

  it('after a reparse whose only changes are deliveries that no longer parse: their typed rows went, so what rested on them is judged again', withDatabase(async (d) => {
    await orderEvent(d, { order: '00000000-0000-4000-8000-000000000003', state: 'pending', eventTime: eventTimeOf(now(-60_000)), receivedAt: now(-60_000) });
    expect((await pass(d, now())).mode).toBe('full');
    expect((await pass(d, now(1_000))).mode).toBe('incremental');
    const finish = async (outcomes: Record<string, number>) => {
      const id = await startRun(d.sql, 'reparse_runs', 'sandbox', { trigger: 'command', status_filter: 'all', parser_version: 2 });
      await d.sql`update reparse_runs set status = 'complete', finished_at = now(), outcomes = ${JSON.stringify(outcomes)}::jsonb where id = ${id}`;
    };
    // A run that changed nothing leaves the passes incremental.
    await finish({ unchanged: 5 });
    expect((await pass(d, now(2_000))).mode).toBe('incremental');
    await finish({ unchanged: 4, now_unparsed: 1 });
    expect((await pass(d, now(3_000))).mode).toBe('full');
  }));

  it('after a pass judged by another release: its standing findings are that release\'s judgement', withDatabase(async (d) => {
    await orderEvent(d, { order: '00000000-0000-4000-8000-000000000002', state: 'pending', eventTime: eventTimeOf(now(-60_000)), receivedAt: now(-60_000) });
    await pass(d, now());
    expect((await pass(d, now(1_000))).mode).toBe('incremental');
    await d.sql`update reconcile_runs set settings = jsonb_set(settings, '{release}', '"0.0.1+0123abc"')`;
    const summary = await pass(d, now(2_000));
    expect(summary.mode).toBe('full');
    const [reason] = await d.sql<{ release: string }[]>`select settings->>'release' as release from reconcile_runs order by id desc limit 1`;
    expect(reason!.release).not.toBe('0.0.1+0123abc');
    expect((await pass(d, now(3_000))).mode).toBe('incremental');
  }));
});
