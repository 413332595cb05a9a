import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';
import type { WebhookMetrics } from './metrics.js';
import type { Route } from '../http/server.js';
import { RecentCommits } from './commit-pressure.js';
import { GroupCommitWriter } from './group-commit.js';
import { createWebhookHandler } from './receiver.js';
import { fetchedSecrets, staticSecrets, type SecretSource } from './secrets.js';
import { addressMatcher } from '../config/addresses.js';
import { allowedAddresses } from './source-address.js';


export interface WebhookReceiver {
  route: Route;
  secrets: SecretSource;
  /** Stop answering 2xx (new deliveries get 503) and wait for queued commits. */
  drain(): Promise<void>;
  /** Why this replica cannot acknowledge now (commits stalled past the ack deadline), or undefined. */
  commitStall(): string | undefined;
  /**
   * Milliseconds the ledger makes deliveries wait now: the slowest commit of the last 500 ms, or
   * longer if a delivery queued or in flight has waited longer than that. 0 when idle.
   */
  commitPressureMs(): number;
}

export interface ReceiverDeps {
  /** Fetches the provider's signing secrets; used when WEBHOOK_SECRET is unset. */
  fetchSecrets?: (signal: AbortSignal) => Promise<string[]>;
}

/** Wires the receiver from the context: secrets, group-commit writer, metrics and the route. */
/** What the receiver needs from the composition root. */
export interface ReceiverContext {
  config: Config;
  log: Logger;
  database: Pick<Database, 'sql' | 'reportReadOnly'>;
  metrics: { webhooks: WebhookMetrics };
}

export async function createWebhookReceiver(ctx: ReceiverContext, deps: ReceiverDeps = {}): Promise<WebhookReceiver> {
  const { config, log, database } = ctx;
  const metrics = ctx.metrics.webhooks;
  let secrets: SecretSource;
  if (config.WEBHOOK_SECRET && config.WEBHOOK_SECRET.length > 0) secrets = staticSecrets(config.WEBHOOK_SECRET);
  else if (deps.fetchSecrets) {
    secrets = fetchedSecrets({
      fetch: deps.fetchSecrets,
      refreshIntervalMs: config.WEBHOOK_KEYS_REFRESH_SECONDS * 1000,
      minRefetchIntervalMs: config.WEBHOOK_KEYS_MIN_REFETCH_SECONDS * 1000,
      fetchTimeoutMs: 2000,
      retiredOverlapMs: config.WEBHOOK_KEYS_OVERLAP_SECONDS * 1000,
      log,
      onRefresh: (outcome) => metrics.keyRefreshes.inc({ outcome }),
    });
  } else throw new Error('WEBHOOK_SECRET is unset and no provider client can fetch the secrets');
  await secrets.start();

  // One batch in flight, the next gathering behind it: each batch is a single statement (one round
  // trip), and on 2 shared cores fewer, bigger batches cost less CPU per delivery than parallel ones
  // (two in flight: 9.6-9.7k deliveries/s against 10.3k with one, and more receiver and Postgres
  // CPU per delivery: bench/README.md, ingest). It also leaves the pool to the poller and the reconciler.
  const recent = new RecentCommits();
  const writer = new GroupCommitWriter(database.sql, {
    maxBatch: 1024,
    maxConcurrentBatches: 1,
    log,
    onBatch: (size) => metrics.batchSize.observe(size),
    onReadOnly: (reason) => database.reportReadOnly(reason),
    onCommit: (seconds) => {
      metrics.commitSeconds.observe(seconds);
      recent.record(seconds * 1000);
    },
  });
  let closing = false;
  const handler = createWebhookHandler({
    environment: config.PROVIDER_ENV,
    signatureHeader: config.WEBHOOK_SIGNATURE_HEADER,
    maxBodyBytes: config.WEBHOOK_MAX_BODY_BYTES,
    ackDeadlineMs: config.WEBHOOK_ACK_DEADLINE_MS,
    allowedSources: allowedAddresses(config.WEBHOOK_ALLOWED_IPS, config.PROVIDER_ENV),
    trustedProxies: addressMatcher(config.TRUSTED_PROXIES),
    secrets,
    writer,
    metrics,
    log: log.child({ component: 'webhooks' }),
    isClosing: () => closing,
  });
  return {
    route: { method: 'POST', path: '/webhooks', handler: (req, res) => handler(req, res) },
    secrets,
    commitStall() {
      const waitedMs = writer.oldestPendingMs();
      return waitedMs > config.WEBHOOK_ACK_DEADLINE_MS ? `ledger commits stalled: oldest pending commit waited ${Math.round(waitedMs)} ms (ack deadline ${config.WEBHOOK_ACK_DEADLINE_MS} ms)` : undefined;
    },
    commitPressureMs: () => Math.max(recent.worstSince(performance.now() - 500), writer.oldestPendingMs()),
    async drain() {
      closing = true;
      secrets.stop();
      await writer.idle();
    },
  };
}
