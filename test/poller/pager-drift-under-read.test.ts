import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runPoll } from '../../src/poller/run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { Loopback, json, makeContext, uuidOf } from '../poller/loopback-provider.js';

/**
 * The provider's orders list changes while the poller reads it. A loopback server
 * plays the provider: a newest-first list paged by `page`/`per_page`, serving exactly the number of
 * orders asked for (it never caps the page size). `onServe` runs after a page's answer is computed
 * and before the next request is served, so orders it adds arrive between two readings.
 */
let database: TestDatabase;
let provider: Loopback | undefined;
beforeAll(async () => {
  database = await createTestDatabase('pager_drift_under_read');
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});
afterAll(async () => {
  await provider?.close();
});

interface Listing {
  /** Oldest first; served newest first. */
  uuids: string[];
  served: { page: number; perPage: number; count: number }[];
}

async function startProvider(initial: number[], onServe: (listing: Listing, add: (ids: number[]) => void, page: number) => void): Promise<{ url: string; listing: Listing }> {
  const listing: Listing = { uuids: initial.map(uuidOf), served: [] };
  const add = (ids: number[]) => listing.uuids.push(...ids.map(uuidOf));
  provider = new Loopback((_req, res: ServerResponse, url) => {
    const page = Number(url.searchParams.get('page'));
    const perPage = Number(url.searchParams.get('per_page'));
    const end = listing.uuids.length - (page - 1) * perPage;
    const orders = [];
    for (let i = end - 1; i >= Math.max(0, end - perPage); i -= 1) {
      orders.push({ uuid: listing.uuids[i]!, state: 'confirmed', external_reference_id: `r-${listing.uuids[i]!.slice(-6)}` });
    }
    listing.served.push({ page, perPage, count: orders.length });
    onServe(listing, add, page);
    json(res, 200, { orders });
  });
  return { url: await provider.listen(), listing };
}

async function snapshotsOf(ids: number[]): Promise<string[]> {
  const uuids = ids.map(uuidOf);
  const rows = await database.sql<{ order_uuid: string }[]>`select order_uuid from order_snapshots where order_uuid = any(${uuids}::uuid[])`;
  return rows.map((r) => r.order_uuid).sort();
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('a first page shorter than asked because it was the whole list, then orders arrive before page 2', () => {
  it('keeps paging by the size asked for: no "fewer orders per page" warning, the run reports the size asked for', async () => {
    // 3 orders, 5 asked per page: page 1 is the whole list. 3 orders arrive before page 2 is read,
    // so page 2 (positions 5..9 of 6) holds the oldest order. The provider serves 5 per page all along.
    let added = false;
    const { url, listing } = await startProvider(range(101, 103), (_l, add, page) => {
      if (page === 1 && !added) {
        added = true;
        add(range(104, 106));
      }
    });
    const { client, ctx, lines } = makeContext(database, url, { POLL_PAGE_SIZE: 5, POLL_CONCURRENCY: 4 });
    try {
      const summary = await runPoll(ctx, client);
      expect(summary.status).toBe('complete');
      // The provider never served fewer orders than asked on any page that was not the list's end.
      expect(listing.served.every((s) => s.perPage === 5)).toBe(true);
      const warned = lines.filter((l) => l.includes('provider serves fewer orders per page than asked'));
      expect({ pageSize: summary.pageSize, warnings: warned.length }).toEqual({ pageSize: 5, warnings: 0 });
      expect(await snapshotsOf(range(101, 103))).toEqual(range(101, 103).map(uuidOf).sort());
    } finally {
      await client.close();
    }
  });

  it('does not fail the run as "ignores the paging parameters" when exactly a page\'s worth of orders arrived', async () => {
    // 3 orders, 5 asked: page 1 is the whole list [103, 102, 101]. 5 orders arrive before page 2, so
    // page 2 (positions 5..9 of 8) is again [103, 102, 101]: the list moved, the paging works.
    let added = false;
    const { url } = await startProvider(range(201, 203), (_l, add, page) => {
      if (page === 1 && !added) {
        added = true;
        add(range(204, 208));
      }
    });
    const { client, ctx } = makeContext(database, url, { POLL_PAGE_SIZE: 5, POLL_CONCURRENCY: 4 });
    try {
      const summary = await runPoll(ctx, client);
      expect({ status: summary.status, error: summary.error }).toEqual({ status: 'complete', error: null });
      expect(await snapshotsOf(range(201, 203))).toEqual(range(201, 203).map(uuidOf).sort());
    } finally {
      await client.close();
    }
  });
});

describe('a full page 1, then exactly a page\'s worth of orders arrives before page 2 is read', () => {
  it('reads on instead of failing the run as "ignores the paging parameters"', async () => {
    // 7 orders, 3 per page: page 1 = [307, 306, 305]. 3 orders arrive before page 2 is served, so
    // page 2 (positions 3..5 of 10) is [307, 306, 305] again; pages 3 and 4 hold 304..301.
    let added = false;
    const { url } = await startProvider(range(301, 307), (_l, add, page) => {
      if (page === 1 && !added) {
        added = true;
        add(range(308, 310));
      }
    });
    const { client, ctx } = makeContext(database, url, { POLL_PAGE_SIZE: 3, POLL_CONCURRENCY: 1 });
    try {
      const summary = await runPoll(ctx, client);
      expect({ status: summary.status, error: summary.error }).toEqual({ status: 'complete', error: null });
      expect(await snapshotsOf(range(301, 307))).toEqual(range(301, 307).map(uuidOf).sort());
    } finally {
      await client.close();
    }
  });
});

describe('a provider that answers every page past the end with its last full page', () => {
  it('fails the run at once as "ignores the paging parameters" when no order arrived, not after POLL_MAX_PAGES', async () => {
    // 6 orders, 3 per page: page 1 = [406, 405, 404], page 2 = [403, 402, 401], pages 3, 4, … the
    // same as page 2. Page 1 never changes: identical pages cannot be orders arriving.
    const uuids = range(401, 406).map(uuidOf).reverse();
    let served = 0;
    provider = new Loopback((_req, res: ServerResponse, url) => {
      served += 1;
      const page = Math.min(2, Number(url.searchParams.get('page')));
      const orders = uuids.slice((page - 1) * 3, page * 3).map((uuid) => ({ uuid, state: 'confirmed', external_reference_id: `r-${uuid.slice(-6)}` }));
      json(res, 200, { orders });
    });
    const url = await provider.listen();
    const { client, ctx } = makeContext(database, url, { POLL_PAGE_SIZE: 3, POLL_CONCURRENCY: 1, POLL_MAX_PAGES: 200 });
    try {
      const summary = await runPoll(ctx, client);
      expect({ status: summary.status, error: summary.error }).toEqual({
        status: 'failed',
        error: expect.stringContaining('ignores the paging parameters'),
      });
      expect(served, 'requests before it gave up').toBeLessThan(20);
    } finally {
      await client.close();
    }
  });
});
