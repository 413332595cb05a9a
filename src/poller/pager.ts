import { setMaxListeners } from 'node:events';
import type { Logger } from '../log/logger.js';
import { ProviderError, type RequestStats } from '../provider/errors.js';
import type { ProviderOrder } from '../provider/schemas.js';
import { boundaryIsSafe, samePage, type Fetched } from './boundary.js';

/**
 * Walks GET /api/v1/orders newest first, several pages in flight, and hands every page to `onPage`
 * in page order. Never misses an order that existed when the scan began, never loops forever.
 *
 * A page goes to `onPage` as soon as it and every page before it are answered, before its boundary
 * with the page before is proven (below): what a page says is true whatever the proof finds, and a
 * page read again is handed over again, after its first copy. Holding pages for the proof sent
 * them to the writer in bursts, one per probe, and left the last burst to be written after the
 * last answer (bench/README.md, "poll").
 *
 * Why concurrency is not free here: new orders push older ones to higher indices. Fetched strictly
 * in ascending order, an order can only move into a page not fetched yet, so nothing is missed. With
 * pages in flight together, page k+1 may be served before page k; an order inserted in between
 * shifts the last order of page k onto page k+1 after k+1 was read: a gap. boundary.ts decides,
 * per adjacent pair, whether a gap is impossible (the pages overlap; k was served first; or head
 * probes, re-reads of page 1 taken every PROBE_EVERY pages, show no insert happened while both were
 * in flight). When it cannot, page k+1 is read again after k is in hand, which makes that boundary
 * safe; the next boundary is then judged against the new copy (a short sequential stretch only
 * while orders keep arriving). Probes cost one request in PROBE_EVERY (2%).
 *
 * The page size is not documented: a first page shorter than asked is the end only if page 2 is
 * empty; otherwise the server's own size is learnt and a page shorter than that ends the scan.
 * A server that ignores the page parameter returns page 1 for every page: the scan stops with an
 * error instead of looping, and maxPages bounds everything else. Orders arriving between two reads
 * can make two pages the same, or fill page 2 behind a first page that was the whole list: page 1
 * read again tells these from a server that pages otherwise than asked.
 */

export const PROBE_EVERY = 50;

export interface ScanOptions {
  fetchPage: (page: number, signal: AbortSignal) => Promise<{ orders: ProviderOrder[]; stats: RequestStats }>;
  /**
   * Persists one page; at most `writeConcurrency` run at once, in the order they are handed over
   * (a copy read again comes after its first). Returns how many orders were new to this run.
   */
  onPage: (orders: ProviderOrder[], page: number, receivedAt: Date) => Promise<number>;
  perPage: number;
  concurrency: number;
  maxPages: number;
  writeConcurrency?: number;
  log: Logger;
  signal?: AbortSignal | undefined;
  /** Filled in as the scan goes, so a failed scan still reports what it cost. */
  result?: ScanResult;
}

export interface ScanResult {
  pages: number;
  orders: number;
  stats: RequestStats;
  refetches: number;
  probes: number;
  pageSize: number;
}

export function newScanResult(perPage: number): ScanResult {
  return { pages: 0, orders: 0, stats: { requests: 0, throttled: 0, retries: 0 }, refetches: 0, probes: 0, pageSize: perPage };
}

/** The scan could not prove it saw every page. */
export class ScanError extends Error {
  override readonly name = 'ScanError';
}

export async function scanOrders(options: ScanOptions): Promise<ScanResult> {
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  // Every request in flight (and every wait in the rate limiter) listens on it: more than Node's
  // default warning threshold of 10 is expected, not a leak.
  setMaxListeners(options.concurrency * 4 + 32, signal);
  const result = options.result ?? newScanResult(options.perPage);
  const probes: Fetched[] = [];
  const inflight = new Map<number, Promise<Fetched>>();
  const settledPages = new Set<number>();
  const writes = new Set<Promise<void>>();
  const writeConcurrency = options.writeConcurrency ?? 4;
  let probe: Promise<Fetched> | undefined;
  let probeError: unknown;
  let probeWantedAfter = Number.NEGATIVE_INFINITY;
  let nextToIssue = 2;
  let issuedSinceProbe = 0;
  let processing = 1;
  let size = options.perPage;
  let endSeen = Number.POSITIVE_INFINITY;
  let pumping = false;
  // Pages to write, in hand-over order, and the first copies answered but not yet in that queue.
  const toWrite: Fetched[] = [];
  const queued = new WeakSet<Fetched>();
  const firstCopies = new Map<number, Fetched>();
  let nextFirstCopy = 2;
  let writer: Promise<void> | undefined;
  let writing = false;
  let wake: () => void = () => {};
  let woken = new Promise<void>((resolve) => (wake = resolve));
  const notify = () => {
    wake();
    woken = new Promise<void>((resolve) => (wake = resolve));
  };
  const lastProbeSent = () => probes[probes.length - 1]?.sent ?? Number.NEGATIVE_INFINITY;

  const fetch = async (page: number): Promise<Fetched> => {
    const sent = performance.now();
    try {
      const { orders, stats } = await options.fetchPage(page, signal);
      add(result.stats, stats);
      // A short page is (for now) the end: issue nothing beyond it. If drift later fills it, the
      // processor fetches the next page itself.
      if (page > 1 && orders.length < size) endSeen = Math.min(endSeen, page);
      return { page, orders, sent, recv: performance.now(), receivedAt: new Date() };
    } catch (error) {
      if (error instanceof ProviderError) add(result.stats, error.stats);
      throw error;
    }
  };

  const pump = () => {
    if (!pumping || signal.aborted) return;
    // Bounded look-ahead keeps memory flat: pages wait here at most until the next probe lands.
    // Two probe intervals, not one: pages in flight while a probe is out need the probe after it,
    // so the processor can lag ~PROBE_EVERY + concurrency pages; a window of exactly that stalled
    // the issuer once per interval (fetch-only bench: 1.24x of the floor before this). A slow
    // database holds the processor back (waitForWriter), and with it this window.
    const windowEnd = Math.min(options.maxPages, processing + options.concurrency + 2 * PROBE_EVERY);
    // Requests in flight: answered pages stay in `inflight` until processed, so count the others.
    const busy = () => inflight.size - settledPages.size;
    while (busy() < options.concurrency && nextToIssue <= windowEnd && nextToIssue <= endSeen) {
      const page = nextToIssue++;
      const promise = fetch(page);
      const settled = (answer: Fetched) => {
        settledPages.add(page);
        firstCopies.set(page, answer);
        queueFirstCopies();
        pump();
        notify();
      };
      promise.then(settled, notify);
      inflight.set(page, promise);
      issuedSinceProbe += 1;
    }
    // A probe the processor waits for is sent early only when no page can be issued anyway (window
    // full, or the end is in sight); otherwise the periodic one will do, keeping probes at 2%.
    const blocked = nextToIssue > windowEnd || nextToIssue > endSeen;
    const wanted = probeWantedAfter > lastProbeSent() && (blocked || busy() === 0);
    if (probe === undefined && probeError === undefined && (issuedSinceProbe >= PROBE_EVERY || wanted)) {
      issuedSinceProbe = 0;
      result.probes += 1;
      const started = fetch(1);
      probe = started;
      started.then(
        (p) => {
          probes.push(p);
          probe = undefined;
          pump();
          notify();
        },
        (error: unknown) => {
          probeError = error;
          probe = undefined;
          notify();
        },
      );
    }
  };

  let writeError: { error: unknown } | undefined;
  // Each page's reading is stamped no earlier than the page handed over before it. Two readings of
  // one order in a run are in page order in time: an order moves to a later page only as orders
  // arrive in front of it, and a page read again goes after its first copy. The arrival time alone
  // could put them the other way round (a slow answer to the earlier reading), and the upsert keeps
  // the later stamp (upsert.ts), so the older reading would win.
  let lastStampMs = Number.NEGATIVE_INFINITY;
  const deliver = async (page: Fetched) => {
    while (writes.size >= writeConcurrency) await Promise.race(writes);
    if (writeError) throw writeError.error;
    // Thrown, not returned: the page stays queued, so the scan cannot finish as if it were written.
    signal.throwIfAborted();
    const stampMs = Math.max(page.receivedAt.getTime(), lastStampMs);
    lastStampMs = stampMs;
    const tracked: Promise<void> = options
      .onPage(page.orders, page.page, new Date(stampMs))
      .then(
        (n) => {
          result.orders += n;
        },
        (error: unknown) => {
          writeError ??= { error };
        },
      )
      .finally(() => writes.delete(tracked));
    writes.add(tracked);
  };

  // One writer at a time takes the queue in order; `writing` is cleared in the same tick as the
  // queue is found empty, so a page queued later always starts a new writer.
  const writeQueued = async () => {
    writing = true;
    try {
      while (toWrite.length > 0 && !signal.aborted && !writeError) {
        await deliver(toWrite[0]!);
        toWrite.shift();
        notify();
      }
    } finally {
      writing = false;
      // A processor waiting for the queue to shrink learns that it will not (error or abort).
      notify();
    }
  };
  const queueForWrite = (page: Fetched) => {
    if (queued.has(page)) return;
    queued.add(page);
    toWrite.push(page);
    if (!writing) {
      writer = writeQueued().catch((error: unknown) => {
        writeError ??= { error };
        notify();
      });
    }
  };
  // First copies go out in page order, up to the short page that ends the list for now; a page
  // beyond it goes out only if the processor reaches it (drift filled the short page).
  const queueFirstCopies = () => {
    for (;;) {
      const page = firstCopies.get(nextFirstCopy);
      if (page === undefined || nextFirstCopy > endSeen) return;
      firstCopies.delete(nextFirstCopy);
      nextFirstCopy += 1;
      queueForWrite(page);
    }
  };

  // Pages waiting for the writer are at most one look-ahead window's worth: beyond that the
  // processor waits, so memory stays bounded however slow the database is.
  const maxQueued = options.concurrency + 2 * PROBE_EVERY;
  const waitForWriter = async () => {
    while (toWrite.length > maxQueued) {
      if (writeError) throw writeError.error;
      signal.throwIfAborted();
      await woken;
    }
  };

  const take = async (page: number): Promise<Fetched> => {
    const promise = inflight.get(page) ?? fetch(page);
    try {
      return await promise;
    } finally {
      inflight.delete(page);
      settledPages.delete(page);
      pump();
    }
  };

  const waitForProbeAfter = async (time: number) => {
    probeWantedAfter = time;
    pump();
    while (lastProbeSent() < time) {
      if (probeError !== undefined) throw probeError;
      signal.throwIfAborted();
      pump();
      await woken;
    }
  };

  try {
    // Page 1 alone first: it is the first head probe, and its length tells the page size.
    const first = await fetch(1);
    probes.push(first);
    result.pages += 1;
    queueForWrite(first);
    if (first.orders.length === 0) return await finish();
    let prev = first;
    size = Math.max(first.orders.length, options.perPage);
    if (first.orders.length < options.perPage) {
      // Short first page: the whole list, or the server's own page size? Page 2 decides.
      const second = await fetch(2);
      if (second.orders.length === 0) return await finish();
      // Page 2 holds orders either because the server pages by fewer than asked, or because the
      // list grew past the size asked while page 2 was asked for (page 1 was then the whole list).
      // Page 1 read again tells: longer than it was, the list grew; the same page as page 2, the
      // server ignores the page parameter.
      const head = await readHeadAgain();
      if (samePage(second, head)) throw ignoredPaging(options.log);
      if (head.orders.length <= first.orders.length) {
        size = first.orders.length;
        result.pageSize = size;
        // fetch(2) judged page 2 against the size asked for: against the server's, it ends the list only if short.
        endSeen = second.orders.length < size ? 2 : Number.POSITIVE_INFINITY;
        options.log.warn({ asked: options.perPage, served: size }, 'provider serves fewer orders per page than asked; paging by its size');
      }
      inflight.set(2, Promise.resolve(second));
      settledPages.add(2);
      firstCopies.set(2, second);
      nextToIssue = 3;
    }
    pumping = true;
    for (processing = 2; ; processing += 1) {
      if (writeError) throw writeError.error;
      await waitForWriter();
      if (processing > options.maxPages) throw new ScanError(`stopped after ${options.maxPages} pages (POLL_MAX_PAGES) without reaching the end of the list`);
      pump();
      let current = await take(processing);
      // The same orders on pages k and k+1: a server ignoring the page parameter, or exactly a
      // page's worth of orders arriving between the two reads (the pages then overlap: no gap). A
      // server ignoring it serves page 1 for any page; after drift page 1 holds the new orders,
      // and with page 1 as it was when the scan began no order arrived at all (a server repeating
      // its last page).
      if (samePage(prev, current)) {
        const head = await readHeadAgain();
        if (samePage(current, head) || samePage(head, first)) throw ignoredPaging(options.log);
      }
      if (!boundaryIsSafe(prev, current, probes)) {
        await waitForProbeAfter(Math.max(prev.recv, current.recv));
        if (!boundaryIsSafe(prev, current, probes)) {
          // Orders arrived while the pair was in flight: read page k+1 again now that k is in hand.
          result.refetches += 1;
          current = await fetch(processing);
        }
      }
      // Every page up to this one is answered, so its first copy is queued before this copy.
      queueFirstCopies();
      queueForWrite(current);
      result.pages += 1;
      // A page the processor fetched itself (beyond the short page that ended issuing) was never
      // issued: neither issue it again nor wait for a first copy of it.
      nextToIssue = Math.max(nextToIssue, processing + 1);
      for (; nextFirstCopy <= processing; nextFirstCopy += 1) firstCopies.delete(nextFirstCopy);
      queueFirstCopies();
      if (current.orders.length < size) return await finish();
      prev = current;
    }
  } catch (error) {
    controller.abort(error);
    await Promise.allSettled([...(writer ? [writer] : []), ...writes]);
    throw error;
  } finally {
    pumping = false;
    controller.abort(new Error('scan finished'));
    await Promise.allSettled([...inflight.values(), ...(probe ? [probe] : [])]);
  }

  /** Page 1 read again to judge what a pair of pages means; not one of the probes boundaryIsSafe orders by time. */
  async function readHeadAgain(): Promise<Fetched> {
    result.probes += 1;
    return fetch(1);
  }

  async function finish(): Promise<ScanResult> {
    pumping = false;
    while (writing) await writer;
    await Promise.all([...writes]);
    if (writeError) throw writeError.error;
    // The writer stops early only when the scan was aborted: pages left unwritten are no success.
    if (toWrite.length > 0) {
      signal.throwIfAborted();
      throw new ScanError(`${toWrite.length} pages were not written`);
    }
    return result;
  }
}

function ignoredPaging(log: Logger): ScanError {
  const message = 'provider returned the same page for two page numbers: it ignores the paging parameters (check POLL_PAGE_PARAM / POLL_PAGE_SIZE_PARAM); scan stopped';
  log.warn(message);
  return new ScanError(message);
}

function add(into: RequestStats, from: RequestStats): void {
  into.requests += from.requests;
  into.throttled += from.throttled;
  into.retries += from.retries;
}
