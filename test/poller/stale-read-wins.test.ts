import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPoll } from '../../src/poller/run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { Loopback, json, makeContext, uuidOf } from './loopback-provider.js';

/**
 * Promise: "a stale API reading never overwrites a newer one".
 *
 * Within one run, an order that paging drift puts on two adjacent pages is read twice, the later
 * page's reading the newer. upsert.ts keeps the copy with the later stamp, so the stamps follow page
 * order (pager.ts), not the answers' arrival: a slow answer to the earlier page must not win.
 */
let database: TestDatabase;
let provider: Loopback;
beforeAll(async () => {
  database = await createTestDatabase('pl_stale_read');
});
afterAll(async () => {
  await provider?.close();
});

describe('two reads of one order within a run', () => {
  it('keeps the newer API reading, not the one whose answer arrived later', async () => {
    // Oldest first; served newest first. D is uuidOf(2).
    const orders = [
      { uuid: uuidOf(1), state: 'confirmed', external_reference_id: 'E' },
      { uuid: uuidOf(2), state: 'authorized', external_reference_id: 'D' },
      { uuid: uuidOf(3), state: 'confirmed', external_reference_id: 'C' },
      { uuid: uuidOf(4), state: 'confirmed', external_reference_id: 'B' },
      { uuid: uuidOf(5), state: 'confirmed', external_reference_id: 'A' },
    ];
    const page = (n: number, size: number) => {
      const end = orders.length - (n - 1) * size;
      const out = [];
      for (let i = end - 1; i >= Math.max(0, end - size); i -= 1) out.push({ ...orders[i]! });
      return out;
    };
    let mutated = false;
    const serve = (res: import('node:http').ServerResponse, n: number, size: number) => {
      const body = { orders: page(n, size) };
      if (n === 2 && !mutated) {
        // Page 2 is read now ([C, D authorized]) ...
        mutated = true;
        // ... then a new order arrives and D is confirmed: D moves onto page 3.
        orders.push({ uuid: uuidOf(6), state: 'authorized', external_reference_id: 'N' });
        orders[1]!.state = 'confirmed';
        // The answer to page 2 is slow to arrive (network); page 3 is answered at once.
        provider.later(400, () => json(res, 200, body));
        return;
      }
      json(res, 200, body);
    };
    provider = new Loopback((req, res, url) => {
      const n = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('per_page'));
      // Pages after 2 are served once page 2 has been read (requests in flight together reach the
      // server in any order; this fixes the one the scenario needs).
      const attempt = () => (n > 2 && !mutated ? provider.later(2, attempt) : serve(res, n, size));
      attempt();
    });
    const url = await provider.listen();
    const { client, ctx } = makeContext(database, url, { POLL_PAGE_SIZE: 2, POLL_CONCURRENCY: 8, RATE_LIMIT_RPS: 450 });
    try {
      const summary = await runPoll(ctx, client);
      expect(summary.status).toBe('complete');
      // What the API says about D now, and said in its newest reading during the run.
      expect(orders[1]!.state).toBe('confirmed');
      const [d] = await database.sql<{ state: string }[]>`select state from order_snapshots where order_uuid = ${uuidOf(2)}`;
      const obs = await database.sql<{ state: string }[]>`select state from order_state_observations where order_uuid = ${uuidOf(2)} order by observed_at`;
      expect({ snapshot: d?.state, observed: obs.map((o) => o.state) }).toEqual({ snapshot: 'confirmed', observed: ['authorized', 'confirmed'] });
    } finally {
      await client.close();
    }
  });
});
