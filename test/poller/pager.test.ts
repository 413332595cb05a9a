import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import type { ProviderOrder } from '../../src/provider/schemas.js';
import { boundaryIsSafe, type Fetched } from '../../src/poller/boundary.js';
import { PROBE_EVERY, ScanError, scanOrders } from '../../src/poller/pager.js';
import { orderUuid } from '../provider/fake-provider.js';

/** An in-memory newest-first list with per-request latency, so pages are served out of order. */
class MemoryList {
  readonly items: ProviderOrder[] = [];
  requests = 0;
  private next = 1;
  constructor(
    count: number,
    private readonly options: { cap?: number; ignorePaging?: boolean; insertEvery?: number; insertCount?: number; seed?: number } = {},
  ) {
    this.add(count);
    this.seed = options.seed ?? 1;
  }
  private seed: number;
  private random(): number {
    this.seed = (this.seed * 1103515245 + 12345) % 2147483648;
    return this.seed / 2147483648;
  }
  add(count: number): void {
    for (let i = 0; i < count; i += 1) {
      const id = this.next++;
      this.items.push({ uuid: orderUuid(id), state: 'confirmed', external_reference_id: `r${id}` });
    }
  }
  fetchPage = async (page: number, _signal: AbortSignal, perPage: number) => {
    this.requests += 1;
    await new Promise((r) => setTimeout(r, Math.floor(this.random() * 4)));
    // Served at this moment; inserts land between serving moments.
    if (this.options.insertEvery && this.requests % this.options.insertEvery === 0) this.add(this.options.insertCount ?? 1);
    const size = Math.min(perPage, this.options.cap ?? perPage);
    const p = this.options.ignorePaging ? 1 : page;
    const end = this.items.length - (p - 1) * size;
    const orders: ProviderOrder[] = [];
    for (let i = end - 1; i >= Math.max(0, end - size); i -= 1) orders.push(this.items[i]!);
    await new Promise((r) => setTimeout(r, Math.floor(this.random() * 4)));
    return { orders, stats: { requests: 1, throttled: 0, retries: 0 } };
  };
}

async function scan(list: MemoryList, perPage: number, concurrency: number, maxPages = 10_000) {
  const seen = new Map<string, number>();
  const pagesInOrder: number[] = [];
  const originals = list.items.map((o) => o.uuid);
  const result = await scanOrders({
    fetchPage: (page, signal) => list.fetchPage(page, signal, perPage),
    onPage: async (orders, page) => {
      pagesInOrder.push(page);
      let fresh = 0;
      for (const o of orders) {
        if (!seen.has(o.uuid)) fresh += 1;
        seen.set(o.uuid, (seen.get(o.uuid) ?? 0) + 1);
      }
      return fresh;
    },
    perPage,
    concurrency,
    maxPages,
    log: silentLogger(),
  });
  return { result, seen, originals, pagesInOrder };
}

describe('scanOrders', () => {
  it('reads a stable list once per page, in page order, ending at the short page', async () => {
    const list = new MemoryList(1234);
    const { result, seen, originals, pagesInOrder } = await scan(list, 100, 8);
    expect(originals.every((u) => seen.has(u))).toBe(true);
    expect(result.orders).toBe(1234);
    expect(result.pages).toBe(13);
    expect(pagesInOrder).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    expect(result.refetches).toBe(0);
  });

  it('ends on an empty page when the list is an exact multiple of the page size', async () => {
    const { result, seen } = await scan(new MemoryList(300), 100, 4);
    expect(seen.size).toBe(300);
    expect(result.pages).toBe(4);
  });

  it('handles an empty list and a list shorter than one page', async () => {
    expect((await scan(new MemoryList(0), 100, 4)).result.orders).toBe(0);
    const small = await scan(new MemoryList(37), 100, 4);
    expect(small.result.orders).toBe(37);
    expect(small.result.stats.requests).toBe(2); // page 1 was short: page 2 confirms the end
  });

  it.each([1, 2, 3, 4, 5])('misses no order while orders arrive mid-scan (seed %i)', async (seed) => {
    const list = new MemoryList(3000, { insertEvery: 3, insertCount: 2, seed });
    const { seen, originals, result } = await scan(list, 50, 8);
    const missing = originals.filter((u) => !seen.has(u));
    expect(missing).toEqual([]);
    // Distinct orders counted once even when drift showed some twice.
    expect(result.orders).toBe(seen.size);
    expect(result.probes).toBeGreaterThanOrEqual(Math.floor(3000 / 50 / PROBE_EVERY));
  });

  it('hands a page to the writer once it and the pages before it are answered, before the probe that proves its boundary', async () => {
    // Pages 2.. answer after 5 ms, several in flight together, so no boundary between them is
    // proven by timing; every head probe (page 1 after the first) answers after 300 ms.
    const list = new MemoryList(1000);
    let firstProbeAnsweredAt = Number.POSITIVE_INFINITY;
    let pageOneReads = 0;
    const handedOverAt = new Map<number, number>();
    const started = performance.now();
    const result = await scanOrders({
      fetchPage: async (page, signal) => {
        const probe = page === 1 && pageOneReads++ > 0;
        await new Promise((r) => setTimeout(r, probe ? 300 : 5));
        const answer = await list.fetchPage(page, signal, 50);
        if (probe) firstProbeAnsweredAt = Math.min(firstProbeAnsweredAt, performance.now() - started);
        return answer;
      },
      onPage: async (orders, page) => {
        if (!handedOverAt.has(page)) handedOverAt.set(page, performance.now() - started);
        return orders.length;
      },
      perPage: 50,
      concurrency: 4,
      maxPages: 100,
      log: silentLogger(),
    });
    expect(result.orders).toBe(1000);
    expect(result.refetches).toBe(0);
    expect(result.probes).toBeGreaterThan(0);
    expect([...handedOverAt.keys()]).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    // All 20 pages of orders are answered within about 5 rounds of 5 ms, long before any probe.
    const early = [...handedOverAt].filter(([, at]) => at < firstProbeAnsweredAt).map(([page]) => page);
    expect(early).toEqual(expect.arrayContaining([2, 3, 4, 5, 10, 20]));
  });

  it('hands a page read again to the writer after its first copy', async () => {
    const list = new MemoryList(3000, { insertEvery: 3, insertCount: 2, seed: 7 });
    const { result, pagesInOrder } = await scan(list, 50, 8);
    expect(result.refetches).toBeGreaterThan(0);
    const firsts = pagesInOrder.filter((page, i) => pagesInOrder.indexOf(page) === i);
    expect(firsts).toEqual(Array.from({ length: firsts.length }, (_, i) => i + 1));
    expect(pagesInOrder.length).toBeGreaterThan(firsts.length);
  });

  describe('with a slow writer', () => {
    /** A scan of a stable list whose writes take `writeMs` each, one at a time; what it fetched and wrote. */
    async function slowScan(list: MemoryList, perPage: number, concurrency: number, writeMs: number, signal?: AbortSignal, onWrite?: (n: number) => void) {
      const requestsByPage = new Map<number, number>();
      let inFlight = 0;
      let maxInFlight = 0;
      let answered = 0;
      let maxWaiting = 0;
      const written: number[] = [];
      const scanned = scanOrders({
        fetchPage: async (page, pageSignal) => {
          requestsByPage.set(page, (requestsByPage.get(page) ?? 0) + 1);
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          try {
            return await list.fetchPage(page, pageSignal, perPage);
          } finally {
            inFlight -= 1;
            answered += 1;
            maxWaiting = Math.max(maxWaiting, answered - written.length);
          }
        },
        onPage: async (orders, page) => {
          written.push(page);
          onWrite?.(written.length);
          await new Promise((r) => setTimeout(r, writeMs));
          return orders.length;
        },
        perPage,
        concurrency,
        maxPages: 10_000,
        writeConcurrency: 1,
        log: silentLogger(),
        signal,
      });
      return { scanned, requestsByPage, written, stats: () => ({ maxInFlight, maxWaiting }) };
    }

    it('waits for it: no page is asked for twice, and the pages waiting stay within two look-ahead windows', async () => {
      const list = new MemoryList(50 * 300);
      const { scanned, requestsByPage, written, stats } = await slowScan(list, 50, 4, 8);
      const result = await scanned;
      expect(result.orders).toBe(15_000);
      expect(result.refetches).toBe(0);
      expect([...requestsByPage].filter(([page, n]) => page > 1 && n > 1)).toEqual([]);
      expect(written).toEqual(Array.from({ length: 301 }, (_, i) => i + 1));
      expect(stats().maxWaiting).toBeLessThanOrEqual(2 * (4 + 2 * PROBE_EVERY) + 4);
    });

    it('keeps several pages in flight, and waits for it, when the server serves fewer orders per page than asked', async () => {
      const list = new MemoryList(30 * 300, { cap: 30 });
      const { scanned, written, stats } = await slowScan(list, 100, 6, 8);
      const result = await scanned;
      expect(result.pageSize).toBe(30);
      expect(result.orders).toBe(9_000);
      expect(written).toHaveLength(301);
      expect(stats().maxInFlight).toBeGreaterThan(1);
      expect(stats().maxWaiting).toBeLessThanOrEqual(2 * (6 + 2 * PROBE_EVERY) + 6);
    });

    it('fails with the write\'s error when a write fails while the scan waits for the writer', async () => {
      const list = new MemoryList(50 * 300);
      let writes = 0;
      const scanned = scanOrders({
        fetchPage: (page, signal) => list.fetchPage(page, signal, 50),
        onPage: async (orders) => {
          writes += 1;
          await new Promise((r) => setTimeout(r, 20));
          if (writes === 8) throw new Error('ledger write failed');
          return orders.length;
        },
        perPage: 50,
        concurrency: 4,
        maxPages: 10_000,
        writeConcurrency: 1,
        log: silentLogger(),
      });
      await expect(scanned).rejects.toThrow('ledger write failed');
      expect(writes).toBe(8);
    });

    it('fails, not succeeds, when aborted before the pages it fetched are written', async () => {
      const list = new MemoryList(50 * 20);
      const abort = new AbortController();
      const { scanned, written } = await slowScan(list, 50, 4, 40, abort.signal, (n) => {
        if (n === 3) abort.abort(new Error('stopping'));
      });
      await expect(scanned).rejects.toThrow('stopping');
      expect(written.length).toBeLessThan(21);
    });
  });

  it('learns a smaller server page size and keeps going', async () => {
    const list = new MemoryList(1000, { cap: 30 });
    const { seen, result } = await scan(list, 100, 6);
    expect(seen.size).toBe(1000);
    expect(result.pageSize).toBe(30);
  });

  it('stops with an error when the server ignores the page parameter', async () => {
    const list = new MemoryList(1000, { ignorePaging: true });
    await expect(scan(list, 100, 4)).rejects.toBeInstanceOf(ScanError);
    expect(list.requests).toBeLessThan(20);
  });

  it('stops at maxPages instead of running forever', async () => {
    await expect(scan(new MemoryList(5000), 10, 4, 20)).rejects.toThrow(/POLL_MAX_PAGES/);
  });
});

describe('boundaryIsSafe', () => {
  const page = (n: number, ids: number[], sent: number, recv: number): Fetched => ({
    page: n,
    orders: ids.map((i) => ({ uuid: orderUuid(i), state: 's' })),
    sent,
    recv,
    receivedAt: new Date(0),
  });
  it('accepts strict order, overlap, or stable probes around both; rejects otherwise', () => {
    const k = page(2, [10, 9], 10, 20);
    expect(boundaryIsSafe(k, page(3, [8, 7], 21, 30), [])).toBe(true);
    expect(boundaryIsSafe(k, page(3, [9, 8], 5, 15), [])).toBe(true);
    const concurrent = page(3, [8, 7], 5, 15);
    expect(boundaryIsSafe(k, concurrent, [])).toBe(false);
    const head = page(1, [20, 19], 0, 4);
    expect(boundaryIsSafe(k, concurrent, [head, page(1, [20, 19], 25, 26)])).toBe(true);
    expect(boundaryIsSafe(k, concurrent, [head, page(1, [21, 20], 25, 26)])).toBe(false);
    expect(boundaryIsSafe(k, concurrent, [head, page(1, [20, 19], 12, 26)])).toBe(false);
  });
});
