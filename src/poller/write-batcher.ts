import { GroupCommit } from '../batch/group-commit.js';
import type { PageToWrite } from './upsert.js';

export interface PageBatcherOptions {
  /** Writes one batch; resolves with how many of each page's orders were new to the run, in page order. */
  write: (pages: readonly PageToWrite[]) => Promise<readonly number[]>;
  /** Statements in flight at once. */
  maxStatements: number;
  /** Orders per statement, however many pages that is (a page larger than this goes alone). */
  maxOrders: number;
}

/**
 * Group commit (batch/group-commit.ts) of the pager's pages. The pager hands over pages in page
 * order as they arrive (a page read again after its first copy); while a statement runs, the
 * pages that arrive meanwhile queue up, and the next statement takes them (batchLength). A
 * database that keeps up writes small batches soon after each page arrives; one that falls behind
 * writes bigger batches, fewer round trips for the same orders, and so catches up instead of
 * capping the scan's pace. Memory stays bounded because the pager never has more than its
 * `writeConcurrency` pages waiting for a write. `add(page)` settles with that page's count of
 * orders new to the run.
 */
export function pageBatcher(options: PageBatcherOptions): GroupCommit<PageToWrite, number> {
  if (options.maxOrders < 1) throw new RangeError('maxOrders must be positive');
  return new GroupCommit({
    write: options.write,
    slots: options.maxStatements,
    take: (queue) => batchLength(queue, (page) => page.orders, options.maxOrders),
  });
}

/**
 * How many pages from the front of `queue` go into the next statement: as many as fit in
 * `maxOrders` (at least one), stopping before a page that shares an order with one already taken,
 * so a statement sees each order once and a state change between two reads of it (paging drift)
 * is still recorded as two observations, in the order they were handed over.
 */
export function batchLength<T>(queue: readonly T[], ordersOf: (item: T) => readonly { uuid: string }[], maxOrders: number): number {
  const seen = new Set<string>();
  let orders = 0;
  let taken = 0;
  for (const item of queue) {
    const pageOrders = ordersOf(item);
    if (taken > 0 && orders + pageOrders.length > maxOrders) break;
    const keys = pageOrders.map((o) => o.uuid.toLowerCase());
    if (taken > 0 && keys.some((k) => seen.has(k))) break;
    for (const k of keys) seen.add(k);
    orders += pageOrders.length;
    taken += 1;
  }
  return taken;
}
