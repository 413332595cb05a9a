import type { AppContext } from './context.js';
import { buildInfo } from '../package/version.js';
import { openContext } from './context.js';
import type { Config } from '../config/schema.js';
import { healthRoutes } from '../http/health.js';
import { operatorRoutes } from '../http/operator-api.js';
import { pageRoutes } from '../http/page.js';
import { serverTimeouts, startHttpServer } from '../http/server.js';
import { startPartitionJob } from '../ledger/partition-job.js';
import type { Shutdown } from '../lifecycle/shutdown.js';
import type { Logger } from '../log/logger.js';
import { leadershipFromGauges } from '../metrics/registry.js';
import { startMetricsServer } from '../http/metrics.js';
import { startPollScheduler } from '../poller/scheduler.js';
import type { PollRunSummary } from '../poller/run.js';
import { createProviderClient, type ProviderClient } from '../provider/client.js';
import { startReconcileScheduler } from '../reconcile/scheduler.js';
import { startReparseJob } from '../reparse/job.js';
import { startStatementInbox } from '../statements/inbox.js';
import { startPayoutReportInbox } from '../payout-import/inbox.js';
import { createWebhookReceiver } from '../webhooks/create-receiver.js';
import { watchCommitStalls } from './commit-stall-watch.js';
import { giveUpSilentLedgerOnStop } from './silent-ledger-on-stop.js';

export interface Daemon {
  ctx: AppContext;
  /** Base URL of the receiver and operator API (PORT). */
  url: string;
  metricsUrl: string;
  provider: ProviderClient | undefined;
  /**
   * One poll that starts after the call (queued behind one in flight), for the demo and tests;
   * resolves with its summary when it and the reconciliation after it are done (undefined when the
   * poller is off or another process holds the poll lock).
   */
  pollNow(): Promise<PollRunSummary | undefined>;
  reconcileNow(): Promise<void>;
  /** Runs the automatic reparse now (queued behind one in flight); resolves when it is done. */
  reparseNow(): Promise<void>;
  stop(reason?: string): Promise<void>;
}

/**
 * The composition root of `start` and `demo`: builds each component from the context and registers
 * its cleanup, in an order whose reverse is a safe shutdown: the receiver and operator API stop
 * accepting first and the receiver finishes committing what it acknowledged, then the jobs stop
 * (each aborted by the shutdown's signal already: a poll, a pass rolled back), then the metrics
 * server, the provider client, and the database pool (and embedded server) last.
 * The statement inbox (RECON_DATA_DIR/inbox) imports dropped bank statements every minute, the
 * payout report inbox (RECON_DATA_DIR/payout-inbox) payout reports; the
 * partition job keeps the delivery ledger's months ahead and retires old ones (hourly).
 */
export async function startDaemon(config: Config, log: Logger, commandShutdown?: Shutdown): Promise<Daemon> {
  const ctx = await openContext(config, log, { migrate: config.MIGRATE_ON_START, defaultMetrics: true, access: 'owner', ...(commandShutdown ? { shutdown: commandShutdown } : {}) });
  const { shutdown, database, registry } = ctx;
  // Right after the database: it watches the whole stop, until only the database's close is left.
  shutdown.register('silent ledger watch', giveUpSilentLedgerOnStop(shutdown, database, log));
  try {
    // A signal that comes while the daemon starts: nothing more is started after the step under
    // way (whose cleanup, registered late, runs at once: lifecycle/shutdown.ts).
    shutdown.throwIfStopping();
    let provider: ProviderClient | undefined;
    if (config.PROVIDER_BASE_URL && config.PROVIDER_API_KEY) {
      provider = createProviderClient(config, log.child({ component: 'provider' }), ctx.metrics.provider);
      const client = provider;
      shutdown.register('provider client', () => client.close());
    }

    const receiver = await createWebhookReceiver(ctx, provider ? { fetchSecrets: (signal) => provider.fetchWebhookSecrets(signal) } : {});
    // The secrets' fetch may take a while: a signal meanwhile stops the start here, before a
    // listener opens after the drain has closed the database.
    shutdown.throwIfStopping();
    shutdown.register('commit stall watch', watchCommitStalls(() => receiver.commitStall(), database));
    // The listener before the jobs, so that a PORT already taken stops the start before any job
    // ran (a second instance must not import the inbox's files first); its stop is moved after
    // the jobs' (below), so that it comes first.
    const http = await startHttpServer({
      host: config.HOST,
      port: config.PORT,
      log,
      name: 'receiver and operator API',
      portSetting: 'PORT',
      timeouts: serverTimeouts(config),
      routes: [receiver.route, ...healthRoutes(database, { isStopping: () => shutdown.isShuttingDown, hasSigningSecret: () => receiver.secrets.current().length > 0, commitStall: () => receiver.commitStall(), leadership: () => leadershipFromGauges(registry, ['poll', 'reconcile']), log }), ...operatorRoutes({ config, database, log, metrics: ctx.metrics.operator, signal: shutdown.signal }), ...pageRoutes()],
    });
    shutdown.register('receiver', async () => {
      await Promise.all([http.close(), receiver.drain()]);
    });
    shutdown.throwIfStopping();
    const metricsServer = await startMetricsServer(registry, { host: config.HOST, port: config.METRICS_PORT, log, timeouts: serverTimeouts(config) });
    shutdown.register('metrics server', () => metricsServer.close());
    shutdown.throwIfStopping();

    const partitions = startPartitionJob(ctx);
    shutdown.register('partition job', () => partitions.stop());

    const inbox = startStatementInbox(ctx, { receiver });
    shutdown.register('statement inbox', () => inbox.stop());
    const payoutInbox = startPayoutReportInbox(ctx);
    shutdown.register('payout report inbox', () => payoutInbox.stop());

    const reconciler = startReconcileScheduler(ctx);
    shutdown.register('reconcile scheduler', () => reconciler.stop());

    const poller = provider
      ? startPollScheduler(ctx, provider, async () => {
          await reconciler.runNow();
        })
      : undefined;
    if (poller) shutdown.register('poll scheduler', () => poller.stop());
    else log.warn('PROVIDER_BASE_URL or PROVIDER_API_KEY unset: the poller is off, only webhooks are reconciled');

    // After the reconciler, so a reparse that applied deliveries can ask it for a pass.
    const reparse = startReparseJob(ctx, {
      receiver,
      onApplied: async () => {
        await reconciler.runNow();
      },
    });
    shutdown.register('reparse job', () => reparse.stop());

    // The receiver stops first: on SIGTERM deliveries get 503 (or no connection) and the
    // acknowledged ones finish committing whatever the jobs do; a job may still take long to stop
    // (an archive's write to a stalled disk: docs/operating.md), and the receiver must not keep
    // acknowledging meanwhile (test/lifecycle/sigterm-receiver-stops-before-jobs.test.ts).
    // Kubernetes' preStop sleep has taken the pod out of the endpoints by then (ops/kubernetes).
    // No job needs the listener: the inboxes and the reparse read only the receiver's commit pace.
    shutdown.stopFirst('receiver');
    shutdown.throwIfStopping();

    log.info({ ...buildInfo(), environment: config.PROVIDER_ENV, url: http.url, metrics: `${metricsServer.url}/metrics` }, 'bnpl-recon running');
    return {
      ctx,
      url: http.url,
      metricsUrl: `${metricsServer.url}/metrics`,
      provider,
      pollNow: async () => poller?.runNow(),
      reconcileNow: async () => {
        await reconciler.runNow();
      },
      reparseNow: async () => {
        await reparse.runNow();
      },
      stop: (reason = 'stop requested') => shutdown.run(reason),
    };
  } catch (error) {
    await shutdown.run('startup failed');
    throw error;
  }
}
