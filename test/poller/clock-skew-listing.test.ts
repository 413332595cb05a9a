import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runPoll } from '../../src/poller/run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { Loopback, json, makeContext, uuidOf } from './loopback-provider.js';
import { discrepancies, orderEvent, pass } from '../reconcile/fixtures.js';

/**
 * Two replicas share one database (README, CONTRACT: "two daemons may share one database"), one poll
 * at a time under the poll lock. The stamp an upsert compares (order_snapshots.last_seen_at) is the
 * polling process's wall clock (pager.ts `new Date()`), and upsert.ts only updates a snapshot when
 * `s.last_seen_at <= excluded.last_seen_at`. A replica whose clock runs a few minutes ahead (or a
 * clock stepped back by NTP) left stamps in the future: every later, complete run on a correct
 * clock listed orders whose listing was silently dropped (state and last_seen_run_id unchanged). A
 * later run's reading now wins; within a run the stamps decide.
 */
let database: TestDatabase;
let provider: Loopback;
beforeAll(async () => {
  database = await createTestDatabase('poller_skew');
});
afterAll(async () => {
  vi.useRealTimers();
  await provider?.close();
  await database?.drop();
});

describe('a complete poll after a poll stamped by a clock running ahead', () => {
  it('records what the later complete run listed (new state, last_seen_run_id) and raises no orphan_webhook for a listed order', async () => {
    const order = { uuid: uuidOf(42), state: 'authorized', external_reference_id: 'R-42' };
    provider = new Loopback((_req, res, u) => json(res, 200, { orders: u.searchParams.get('page') === '1' ? [{ ...order }] : [] }));
    const url = await provider.listen();
    const { client, ctx } = makeContext(database, url, { POLL_PAGE_SIZE: 10, POLL_CONCURRENCY: 2 });
    try {
      // Replica A: its clock is 10 minutes ahead.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date(Date.now() + 10 * 60_000));
      const first = await runPoll(ctx, client);
      vi.useRealTimers();
      expect(first.error).toBeNull();

      // The order is confirmed; replica B (correct clock) polls next, and the run completes.
      order.state = 'confirmed';
      const second = await runPoll(ctx, client);
      expect(second.status).toBe('complete');

      const [snap] = await database.sql<{ state: string; last_seen_run_id: string }[]>`
        select state, last_seen_run_id::text from order_snapshots where order_uuid = ${order.uuid}`;
      expect.soft({ state: snap?.state, lastSeenRun: snap?.last_seen_run_id }).toEqual({ state: 'confirmed', lastSeenRun: String(second.runId) });

      // The reconciler: the order's webhook arrived two hours ago; the latest complete run listed it.
      await orderEvent(database, {
        order: order.uuid, state: 'authorized', eventTime: new Date(Date.now() - 2 * 3600_000).toISOString().replace('Z', '000000Z'),
        receivedAt: new Date(Date.now() - 2 * 3600_000),
      });
      await pass(database, new Date());
      expect((await discrepancies(database, 'orphan_webhook')).map((d) => d.entity_id)).toEqual([]);
    } finally {
      vi.useRealTimers();
      await client.close();
    }
  });
});
