import type { ProviderOrder } from '../provider/schemas.js';

/** One answer of GET /api/v1/orders with the times around it (performance.now() ms). */
export interface Fetched {
  page: number;
  orders: ProviderOrder[];
  /** Before the request was sent: the provider served it after this. */
  sent: number;
  /** After the answer arrived: the provider served it before this. */
  recv: number;
  receivedAt: Date;
}

/** Same orders in the same order (non-empty): the same slice of the list. */
export function samePage(a: Fetched, b: Fetched): boolean {
  if (a.orders.length === 0 || a.orders.length !== b.orders.length) return false;
  return a.orders.every((order, i) => order.uuid === b.orders[i]?.uuid);
}

function overlaps(a: Fetched, b: Fetched): boolean {
  if (a.orders.length === 0 || b.orders.length === 0) return false;
  const seen = new Set(a.orders.map((o) => o.uuid));
  return b.orders.some((o) => seen.has(o.uuid));
}

/**
 * Can orders have slipped between page k (`prev`) and page k+1 (`cur`)? With inserts only at the
 * front (newest first), a gap needs k+1 to be served before k with an insert in between. So the
 * boundary is safe when:
 *  - k was served before k+1 was sent (the shift could only grow: overlap, never a gap);
 *  - the pages share an order (k+1 was served at the larger shift);
 *  - head probes bracket both fetches and all read the same page 1: no insert happened meanwhile.
 * `probes` are page-1 reads in the order they were sent, at most one in flight at a time.
 */
export function boundaryIsSafe(prev: Fetched, cur: Fetched, probes: readonly Fetched[]): boolean {
  if (prev.recv <= cur.sent) return true;
  if (overlaps(prev, cur)) return true;
  const from = Math.min(prev.sent, cur.sent);
  const to = Math.max(prev.recv, cur.recv);
  let before = -1;
  let after = -1;
  for (let i = 0; i < probes.length; i += 1) {
    const probe = probes[i]!;
    if (probe.recv <= from) before = i;
    if (after === -1 && probe.sent >= to) after = i;
  }
  if (before === -1 || after === -1) return false;
  const head = probes[before]!;
  for (let i = before + 1; i <= after; i += 1) {
    if (!samePage(head, probes[i]!)) return false;
  }
  return true;
}
