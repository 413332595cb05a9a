import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPoll } from '../../src/poller/run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { Loopback, json, makeContext, uuidOf } from './loopback-provider.js';

/**
 * Promises: "no order the API listed is skipped or lost (... a crash or SIGTERM mid-poll ...)" and
 * graceful shutdown "stop, finish in-flight work"; docs/operating.md: the first SIGTERM "aborts a
 * poll in progress"; only a `complete` run "may later prove an order absent" (run.ts).
 *
 * A page waiting for a write slot when the signal fires is not written: the scan must then fail as
 * aborted, not finish as if the page were in the ledger (pager.ts deliver()).
 */
let database: TestDatabase;
let provider: Loopback;
beforeAll(async () => {
  database = await createTestDatabase('pl_abort_complete');
});
afterAll(async () => {
  await provider?.close();
});

describe('a poll aborted (SIGTERM, lost lock) while its last page waits for the database', () => {
  it('is not recorded complete, and does not silently drop that page', async () => {
    const TOTAL = 5000;
    const PAGE = 2000; // writeConcurrency = (1 + 1) * ceil(2000 / 2000) = 2 pages at the writer
    const all = Array.from({ length: TOTAL }, (_, i) => ({ uuid: uuidOf(i + 1), state: 'confirmed', external_reference_id: `R${i + 1}` }));
    let lastServed = false;
    provider = new Loopback((_req, res, url) => {
      const n = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('per_page'));
      // Newest first: the highest ids on page 1.
      const newestFirst = [...all].reverse();
      const slice = newestFirst.slice((n - 1) * size, n * size);
      if (n === 3) lastServed = true;
      json(res, 200, { orders: slice });
    });
    const url = await provider.listen();
    const { client, ctx } = makeContext(database, url, { POLL_PAGE_SIZE: PAGE, POLL_CONCURRENCY: 4 });

    // The ledger is slow: another session holds a lock on order_snapshots, so writes wait.
    const blocker = await database.sql.reserve();
    await blocker`begin`;
    await blocker`lock table order_snapshots in exclusive mode`;

    const controller = new AbortController();
    try {
      const running = runPoll(ctx, client, controller.signal);
      // Every page fetched; the scan now waits for its writes.
      while (!lastServed) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 500));
      // SIGTERM (or the poll lock lost): the run's signal fires ...
      controller.abort(new Error('shutting down'));
      // ... and the database catches up, so the writes in flight finish.
      await blocker`commit`;
      const summary = await running;

      const [counted] = await database.sql<{ n: number }[]>`select count(*)::int as n from order_snapshots`;
      const n = counted!.n;
      const [run] = await database.sql<{ status: string }[]>`select status::text from poll_runs where id = ${summary.runId}`;
      // The signal fired while the run was still waiting on its writes: it is no complete run.
      expect({ status: run!.status, ordersInLedger: n }).toEqual({ status: 'aborted', ordersInLedger: n });
      // The page that waited for the database was not written, and the run says it is incomplete.
      expect(n).toBeLessThan(TOTAL);
    } finally {
      blocker.release();
      await client.close();
    }
  });
});
