import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { startDaemon, type Daemon } from '../../src/daemon/daemon.js';
import { silentLogger } from '../../src/log/logger.js';
import { startSimulator, type FaultRates, type Simulator, type SimulatorOptions } from '../../sim/index.js';
import { SUBSCRIPTION_TOPICS } from '../../src/provider/vocabulary.js';
import { waitFor } from '../helpers/wait.js';
import type { TestDatabase } from '../helpers/database.js';

/** Every topic family the simulator sends: the ground truth assumes the receiver takes them all. */
/** What `webhooks register` subscribes to by default: every topic family the daemon reads. */
export const ALL_TOPICS = SUBSCRIPTION_TOPICS;

/** Once a year: the tests drive polls and passes themselves (pollNow, reconcileNow). */
export const RARE_CRON = '0 0 1 1 *';

export interface DaemonEnvOptions {
  sim: Simulator;
  databaseUrl: string;
  graceSeconds: number;
  extra?: Record<string, string>;
}

/** The environment of a daemon pointed at the simulator's sandbox (CLI children and loadConfig alike). */
export function daemonEnv(o: DaemonEnvOptions): Record<string, string> {
  return {
    DATABASE_URL: o.databaseUrl,
    PORT: '0',
    METRICS_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    PROVIDER_ENV: 'sandbox',
    PROVIDER_BASE_URL: o.sim.url,
    PROVIDER_API_KEY: o.sim.apiKeys.sandbox,
    POLL_SCHEDULE: RARE_CRON,
    RECONCILE_SCHEDULE: RARE_CRON,
    WEBHOOK_GRACE_SECONDS: String(o.graceSeconds),
    PAYOUT_SOURCE_IBANS: o.sim.bank.sandbox.providerIban,
    DB_POOL_MAX: '6',
    ...o.extra,
  };
}

export function daemonConfig(o: DaemonEnvOptions): Config {
  // Only what we set: the developer's shell must not leak settings (WEBHOOK_SECRET, ...) into the run.
  return loadConfig(daemonEnv(o));
}

export interface Stack {
  sim: Simulator;
  daemon: Daemon;
  config: Config;
  stop(): Promise<void>;
}

export interface StackOptions {
  db: TestDatabase;
  seed: string | number;
  faults: Partial<FaultRates>;
  ordersPerDay: number;
  graceSeconds: number;
  sim?: Partial<SimulatorOptions>;
  /** Settings on top of daemonEnv's (e.g. OPERATOR_TOKENS). */
  env?: Record<string, string>;
}

/** Simulator + in-process daemon on a test database, the receiver registered for every topic. */
export async function startStack(o: StackOptions): Promise<Stack> {
  // The clock stays paused: the tests move it with advance() and drain(), so simulated time is exact.
  const sim = await startSimulator({ seed: o.seed, faults: o.faults, business: { ordersPerDay: o.ordersPerDay }, ...o.sim });
  let daemon: Daemon;
  const config = daemonConfig({ sim, databaseUrl: o.db.url, graceSeconds: o.graceSeconds, ...(o.env ? { extra: o.env } : {}) });
  try {
    daemon = await startDaemon(config, silentLogger());
  } catch (error) {
    await sim.stop();
    throw error;
  }
  try {
    for (const topic of ALL_TOPICS) {
      const { status } = await daemon.provider!.registerWebhook(topic, `${daemon.url}/webhooks`);
      if (status !== 200 && status !== 201) throw new Error(`registering ${topic} answered ${status}`);
    }
  } catch (error) {
    await sim.stop();
    await daemon.stop('registration failed');
    throw error;
  }
  return {
    sim,
    daemon,
    config,
    async stop() {
      await sim.stop();
      await daemon.stop('test done');
    },
  };
}

export { sleep, waitFor } from '../helpers/wait.js';

/**
 * Waits until every sandbox delivery due by the simulator's (paused) clock has been answered 2xx,
 * without fast-forwarding: what is planned for later (a delivery delayed past the grace, a repeat
 * minutes later) stays undelivered. Copies signed with the other environment's secret are left
 * out: the receiver answers them 401 and the simulator retries them on its own schedule.
 */
export async function settleDue(sim: Simulator, timeoutMs = 30_000): Promise<void> {
  await waitFor('the deliveries due by now', () => {
    if (sim.stats().inFlight > 0) return undefined;
    const now = sim.now();
    const answered = new Set(sim.attempts().filter((a) => a.status !== null && a.status >= 200 && a.status < 300).map((a) => a.seq));
    const missing = sim.plannedDeliveries().some((p) => p.env === 'sandbox' && p.signedWith === 'sandbox' && p.dueAt <= now && !answered.has(p.seq));
    return missing ? undefined : true;
  }, timeoutMs, 50);
}
