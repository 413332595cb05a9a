import { Counter, Gauge, type Registry } from 'prom-client';
import { buildInfo } from '../package/version.js';
import type { ProviderEnvironment } from '../config/schema.js';
import { answerWithin } from '../db/answer-within.js';
import type { Database } from '../db/database.js';
import { METRIC_PREFIX } from './registry.js';

export const READ_SOURCES = ['freshness', 'discrepancies', 'invoices'] as const;
export type ReadSource = (typeof READ_SOURCES)[number];

/**
 * The scrape-time reads of the ledger and the counter of those that failed, shared by every gauge
 * that reads it (the ledger-health gauges below, the discrepancy gauges of reconcile/metrics.ts).
 */
export interface LedgerReads {
  failures: Counter<'source'>;
  /**
   * The collect() of the gauges a scrape-time read of `source` fills: the first caller starts
   * `refresh`, and every caller until it settles shares it (prom-client collects all gauges of a
   * scrape at once). A scrape waits for it at most the reads' timeout: a database that stops
   * answering (a lost host, a lock a migration holds) would otherwise hold /metrics, and with it
   * bnpl_recon_database_up and every alert on it. A read that fails (`refresh` rejects) or passes the
   * timeout counts once as a failure of `source` (a timeout calls `onTimeout`); it is not started
   * again until it settles, so scrapes of a
   * stalled database do not pile queries up (they answer at once, with the last values).
   */
  collector(source: ReadSource, refresh: () => Promise<void>, onTimeout?: () => void): () => Promise<void>;
}

export function createLedgerReads(registry: Registry, options: { timeoutMs?: number } = {}): LedgerReads {
  const timeoutMs = options.timeoutMs ?? 2000;
  const inFlight = new Set<Promise<unknown>>();
  const failures = new Counter({
    name: `${METRIC_PREFIX}ledger_read_failures_total`,
    help: 'Scrape-time reads of the ledger that failed (their gauges keep the last value read), by source',
    labelNames: ['source'] as const,
    registers: [registry],
    // prom-client starts every metric's collect() of a scrape synchronously, then awaits them all:
    // after one tick every read of this scrape is in flight, and waiting for them makes this
    // scrape's count include this scrape's failures.
    async collect() {
      await Promise.resolve();
      await Promise.allSettled([...inFlight]);
    },
  });
  for (const source of READ_SOURCES) failures.inc({ source }, 0);
  const bound = (read: Promise<void>, source: ReadSource, onTimeout?: () => void): Promise<void> => {
    const bounded = answerWithin(read, timeoutMs, () => {
      failures.inc({ source });
      onTimeout?.();
    });
    inFlight.add(bounded);
    void bounded.finally(() => inFlight.delete(bounded));
    return bounded;
  };
  return {
    failures,
    collector(source, refresh, onTimeout) {
      let pending: Promise<void> | undefined;
      let bounded: Promise<void> = Promise.resolve();
      return () => {
        if (pending === undefined) {
          // A read is counted once as failed: when it passes the timeout, or when it fails
          // before that. A read that timed out and then failed (a connection a failover left
          // half-open) was counted twice.
          let timedOut = false;
          const started = refresh()
            .catch(() => {
              if (!timedOut) failures.inc({ source });
            })
            .finally(() => {
              if (pending === started) pending = undefined;
            });
          pending = started;
          bounded = bound(started, source, () => {
            timedOut = true;
            onTimeout?.();
          });
        }
        return bounded;
      };
    },
  };
}

/**
 * What an SRE asks first, answered at scrape time from the ledger itself, so every replica reports
 * the same truth and a restart does not reset it:
 * - bnpl_recon_build_info{version,node,commit,environment} 1 (environment: PROVIDER_ENV; dashboards pick replicas by it)
 * - bnpl_recon_database_up: 1 when this scrape's ledger read succeeded within the reads' timeout on a
 *   server that accepts writes, else 0 (a standby or a read-only server acknowledges nothing);
 *   bnpl_recon_database_last_error_timestamp_seconds: when one last failed (absent until then)
 * - bnpl_recon_{poll,reconcile}_last_complete_timestamp_seconds: finished_at of the newest complete
 *   poll run / reconciliation pass of this environment in poll_runs / reconcile_runs, whichever
 *   replica ran it, labelled with the environment (absent until one exists, rather than a 0 that
 *   reads as 1970; a failed read keeps the last value).
 * Both timestamps are the same on every replica: aggregate them with max, never sum.
 */
export function createLedgerHealthMetrics(registry: Registry, reads: LedgerReads, database: Database, environment: ProviderEnvironment): void {
  const p = METRIC_PREFIX;
  const info = buildInfo();
  const build = new Gauge({ name: `${p}build_info`, help: 'Always 1; the labels say which build runs', labelNames: ['version', 'node', 'commit', 'environment'] as const, registers: [registry] });
  build.set({ ...info, environment }, 1);
  const failures = reads.failures;

  const down = () => {
    up.set(0);
    lastError.set(Date.now() / 1000);
  };
  const read = async (): Promise<void> => {
    try {
      // Newest first by primary key: a backward index scan that stops at the first complete row.
      const [row] = await database.sql<{ poll: number | null; reconcile: number | null; read_only: boolean }[]>`
        select
          pg_is_in_recovery() or current_setting('transaction_read_only') = 'on' as read_only,
          (select extract(epoch from finished_at)::float8 from poll_runs
            where environment = ${environment} and status = 'complete' order by id desc limit 1) as poll,
          (select extract(epoch from finished_at)::float8 from reconcile_runs
            where environment = ${environment} and status = 'complete' order by id desc limit 1) as reconcile`;
      up.set(row?.read_only ? 0 : 1);
      if (row?.read_only) lastError.set(Date.now() / 1000);
      if (row?.poll != null) pollDone.set({ environment }, row.poll);
      if (row?.reconcile != null) passDone.set({ environment }, row.reconcile);
    } catch (error) {
      down();
      throw error;
    }
  };
  // A read past the reads' timeout (createLedgerReads) is a database that is not up, as a failed one.
  const collectOnce = reads.collector('freshness', read, down);
  // prom-client collects every metric of a scrape at once (Promise.all): the four gauges share one read.
  const up = new Gauge({ name: `${p}database_up`, help: "1 when this scrape's read of the ledger succeeded on a server that accepts writes, 0 when it failed, timed out or found the server read-only", registers: [registry], collect: collectOnce });
  const lastError = new Gauge({ name: `${p}database_last_error_timestamp_seconds`, help: "Unix time of the last failed read of the ledger at scrape time", registers: [registry], collect: collectOnce });
  // prom-client gives a gauge without labels a 0 from the start, which reads as "last failed in 1970";
  // remove() makes it absent until a read fails, as documented above (as src/ledger/metrics.ts does).
  lastError.remove();
  const pollDone = new Gauge({ name: `${p}poll_last_complete_timestamp_seconds`, help: 'Unix time the newest complete poll run of this environment finished (from poll_runs, any replica)', labelNames: ['environment'] as const, registers: [registry], collect: collectOnce });
  const passDone = new Gauge({ name: `${p}reconcile_last_complete_timestamp_seconds`, help: 'Unix time the newest complete reconciliation pass of this environment finished (from reconcile_runs, any replica)', labelNames: ['environment'] as const, registers: [registry], collect: collectOnce });
}
