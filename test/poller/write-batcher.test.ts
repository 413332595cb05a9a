import { describe, expect, it } from 'vitest';
import type { PageToWrite } from '../../src/poller/upsert.js';
import { pageBatcher, batchLength } from '../../src/poller/write-batcher.js';
import { orderUuid } from '../provider/fake-provider.js';

const page = (ids: number[]): PageToWrite => ({
  orders: ids.map((id) => ({ uuid: orderUuid(id), state: 'confirmed', external_reference_id: `r${id}` })),
  observedAt: new Date(0),
});
const orders = (p: PageToWrite) => p.orders;

describe('batchLength', () => {
  it('takes pages up to the order cap, and always at least one', () => {
    const queue = [page([1, 2]), page([3, 4]), page([5, 6])];
    expect(batchLength(queue, orders, 4)).toBe(2);
    expect(batchLength(queue, orders, 100)).toBe(3);
    expect(batchLength(queue, orders, 1)).toBe(1);
    expect(batchLength([], orders, 10)).toBe(0);
  });

  it('stops before a page that repeats an order already in the batch (paging drift)', () => {
    expect(batchLength([page([1, 2]), page([2, 3]), page([4])], orders, 100)).toBe(1);
    expect(batchLength([page([1, 2]), page([3]), page([3, 4])], orders, 100)).toBe(2);
  });

  it('compares uuids case-insensitively, as Postgres does', () => {
    const upper: PageToWrite = { orders: [{ uuid: orderUuid(1).toUpperCase(), state: 'x' }], observedAt: new Date(0) };
    expect(batchLength([page([1]), upper], orders, 100)).toBe(1);
  });
});

describe('pageBatcher', () => {
  it('writes what queued during a statement as one batch, in page order, and gives each page its own count', async () => {
    const batches: number[][] = [];
    const releases: (() => void)[] = [];
    const batcher = pageBatcher({
      maxStatements: 1,
      maxOrders: 1000,
      write: (pages) => {
        const ids = pages.map((p) => Number.parseInt(p.orders[0]!.uuid.slice(-12), 16));
        batches.push(ids);
        return new Promise<number[]>((resolve) => releases.push(() => resolve(ids.map((id) => id * 10))));
      },
    });
    const results = [batcher.add(page([1])), batcher.add(page([2])), batcher.add(page([3])), batcher.add(page([4]))];
    expect(batches).toEqual([[1]]);
    releases.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    releases.shift()!();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40]);
    await batcher.idle();
  });

  it('runs at most maxStatements writes at once', async () => {
    let running = 0;
    let peak = 0;
    const batcher = pageBatcher({
      maxStatements: 2,
      maxOrders: 1,
      write: async (pages) => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 2));
        running -= 1;
        return pages.map(() => 1);
      },
    });
    const counts = await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.add(page([i + 1]))));
    expect(peak).toBe(2);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(10);
  });

  it('rejects every page of a failed batch', async () => {
    const batcher = pageBatcher({ maxStatements: 1, maxOrders: 10, write: () => Promise.reject(new Error('db down')) });
    const results = await Promise.allSettled([batcher.add(page([1])), batcher.add(page([2]))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
