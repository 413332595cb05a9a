import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { runPoll } from '../../src/poller/run.js';
import { Loopback, makeContext, uuidOf } from '../poller/loopback-provider.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The poller takes any state string ("the real API reports more than the spec lists"), and
 * order_state_observations has `state` in its primary key (a btree), whose entries must stay under
 * 2,704 bytes; the webhook side bounds order_state to 512 UTF-16 units for the same reason
 * (webhooks/payloads.ts). As test/poller/poison-order.test.ts for NUL: one order the ledger cannot
 * store must not keep its page-mates out of the ledger on every poll.
 */
let database: TestDatabase;
let provider: Loopback | undefined;
useTestDatabase('poller_long_state', (d) => (database = d));
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

describe('an order whose state is longer than a btree key allows', () => {
  it('does not keep its page-mates out of the ledger on every poll', async () => {
    const TOTAL = 300;
    const BAD = 150;
    // Incompressible, so Postgres cannot squeeze the index entry under the limit.
    const longState = randomBytes(3000).toString('base64');
    provider = new Loopback((_req, res, url) => {
      const n = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('per_page'));
      const orders = [];
      for (let i = TOTAL - (n - 1) * size; i > Math.max(0, TOTAL - n * size); i -= 1) {
        orders.push({ uuid: uuidOf(i), state: i === BAD ? longState : 'confirmed', external_reference_id: `R${i}` });
      }
      const body = JSON.stringify({ orders });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    });
    const url = await provider.listen();
    const { client, ctx } = makeContext(database as never, url, { POLL_PAGE_SIZE: 100 });
    try {
      const first = await runPoll(ctx, client);
      const second = await runPoll(ctx, client);
      const [counted] = await database.sql<{ n: number }[]>`select count(*)::int as n from order_snapshots`;
      expect(counted!.n, `orders in the ledger after two polls (runs: ${first.status} "${first.error}", ${second.status} "${second.error}")`).toBe(TOTAL);
      expect([first.status, second.status]).toEqual(['complete', 'complete']);
      // The long one is listed, its state cut to what the index holds.
      const [cut] = await database.sql<{ state: string }[]>`select state from order_snapshots where order_uuid = ${uuidOf(BAD)}`;
      expect(cut?.state).toBe(longState.slice(0, 512));
    } finally {
      await client.close();
    }
  });
});
