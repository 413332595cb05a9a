import type { AddressInfo } from 'node:net';
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '../src/log/logger.js';
import { Business, type BusinessHooks } from './business.js';
import { beginBusiness } from './business-start.js';
import { Dispatcher } from './delivery.js';
import { FaultPlanner, type PlannedDelivery } from './faults.js';
import { PayloadVariants } from './variants.js';
import type { Simulator } from './simulator-api.js';
import { expectedFindings } from './ground-truth.js';
import { businessSchema, ENVIRONMENTS, faultRatesSchema, payloadVariantsSchema, type Env, type SimulatorOptions } from './options.js';
import { Prng } from './prng.js';
import { SlidingWindowLimiter } from './rate-limit.js';
import type { Registration } from './registrations.js';
import { createApiServer } from './server.js';
import { writeStatementFiles } from './statements/index.js';
import { parseContractTerms } from './contract.js';
import { reportForm, writePayoutReportFiles } from './payout-reports/index.js';
export type { Simulator, SimulatorStats } from './simulator-api.js';
import { SimClock, isoSeconds, DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from './time.js';

const DEFAULT_START = '2026-01-05T00:00:00Z';
// Bodies average ~400 bytes: the log stays under ~25 MB in a long `sim` run.
const PLANNED_LOG_LIMIT = 50_000;

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = String(options.seed ?? 1);
  const log = options.log ?? silentLogger();
  const rates = faultRatesSchema.parse(options.faults ?? {});
  const variantRates = payloadVariantsSchema.parse(options.payloadVariants ?? {});
  const businessOptions = businessSchema.parse(options.business ?? {});
  const terms = parseContractTerms(options.contractTerms);
  const start = Date.parse(options.startTime ?? DEFAULT_START);
  if (Number.isNaN(start)) throw new Error(`startTime: not an ISO 8601 time: ${options.startTime}`);
  const timeScale = options.timeScale ?? 1;
  if (!(timeScale > 0)) throw new Error('timeScale must be positive');
  const signatureHeader = (options.signatureHeader ?? 'x-service-signature').toLowerCase();

  const keyRng = new Prng(`${seed}/keys`);
  const apiKeys: Record<Env, string> = {
    sandbox: options.apiKeys?.sandbox ?? `sbx_${keyRng.hex(16)}`,
    production: options.apiKeys?.production ?? `live_${keyRng.hex(16)}`,
  };
  const secrets: Record<Env, string> = {
    sandbox: options.secrets?.sandbox ?? `whsec_sbx_${keyRng.hex(24)}`,
    production: options.secrets?.production ?? `whsec_live_${keyRng.hex(24)}`,
  };
  if (apiKeys.sandbox === apiKeys.production || secrets.sandbox === secrets.production) {
    throw new Error('sandbox and production must not share an API key or a secret');
  }

  const clock = new SimClock(start, timeScale);
  const firstDay = Math.floor(start / DAY_MS) * DAY_MS;
  const outages = (options.apiOutageDays ?? []).map((day) => ({ from: firstDay + day * DAY_MS, to: firstDay + (day + 1) * DAY_MS + HOUR_MS }));
  const inApiOutage = (at: number) => outages.some((o) => at >= o.from && at < o.to);
  const registrations: Record<Env, Registration[]> = { sandbox: [], production: [] };
  const registrationRng = new Prng(`${seed}/registrations`);
  const planned: PlannedDelivery[] = [];
  let plannedSeq = 0;
  let events = 0;
  let horizon = start;
  /** How far the business has been played: pause() stops it there, so no event follows the call. */
  let businessRanUntil = start;
  let stopped = false;
  let wake: (() => void) | undefined;
  const waiters: { check: () => boolean; resolve: () => void }[] = [];
  const registrationWaiters: (() => void)[] = [];
  let drainFastForward = 0;

  const dispatcher = new Dispatcher(
    clock,
    {
      signatureHeader,
      timeoutMs: options.deliveryTimeoutMs ?? 5000,
      maxRetries: options.maxRetries ?? 5,
      retryBaseMs: options.retryBaseMs ?? MINUTE_MS,
      retryFactor: options.retryFactor ?? 2,
      concurrency: options.deliveryConcurrency ?? 16,
    },
    (env) => registrations[env],
    () => wake?.(),
    log,
  );

  const worlds = ENVIRONMENTS.map((env) => {
    const planner = new FaultPlanner(
      env,
      seed,
      { rates, latencyMs: options.deliveryLatencyMs ?? [200, 3 * SECOND_MS], graceMs: options.graceMs ?? HOUR_MS, secrets },
      (delivery) => {
        const full = { ...delivery, seq: plannedSeq++ };
        if (planned.length < PLANNED_LOG_LIMIT) planned.push(full);
        dispatcher.add(full);
      },
    );
    const variants = new PayloadVariants(env, seed, variantRates);
    const hooks: BusinessHooks = {
      emit: (event) => {
        events += 1;
        planner.emit(variants.apply(event));
      },
      orderFault: () => planner.orderFault(),
      payoutFault: () => planner.payoutFault(),
      creditWithoutPayout: () => planner.creditWithoutPayout(),
      invoiceFault: (stage) => planner.invoiceFault(stage),
      invoiceFaultDetails: planner.invoiceFaultDetails,
      record: (record) => planner.record(record),
    };
    const business = new Business(env, seed, businessOptions, terms, start, hooks);
    beginBusiness(business);
    return { env, planner, business };
  });
  const world = (env: Env) => worlds.find((w) => w.env === env) as (typeof worlds)[number];

  const register = (env: Env, topic: string, address: string) => {
    const existing = registrations[env].find((r) => r.topic === topic && r.address === address);
    if (existing) return { registration: existing, created: false };
    const registration = { uuid: registrationRng.uuid(), topic, address };
    registrations[env].push(registration);
    for (const resolve of registrationWaiters.splice(0)) resolve();
    wake?.();
    return { registration, created: true };
  };

  const server = createApiServer({
    backend: {
      envForKey: (key) => ENVIRONMENTS.find((env) => apiKeys[env] === key),
      listOrders: (env, offset, limit) => {
        const orders = world(env).business.orders;
        const out = [];
        for (let i = orders.length - 1 - offset; i >= 0 && out.length < limit; i--) {
          const o = orders[i];
          if (o) out.push({ uuid: o.uuid, state: o.state, external_reference_id: o.externalReferenceId });
        }
        return out;
      },
      register,
      secret: (env) => secrets[env],
      ordersAvailable: () => !inApiOutage(clock.now()),
    },
    limiter: new SlidingWindowLimiter(options.rateLimitPerSecond ?? 500, options.rateLimitNow),
    defaultPerPage: options.defaultPerPage ?? 25,
    maxPerPage: options.maxPerPage ?? 100,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = options.host === undefined || options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;

  const nextBusinessAt = (): number | undefined => {
    let next: number | undefined;
    for (const w of worlds) {
      const at = w.business.nextActionAt();
      if (at !== undefined && at <= horizon && (next === undefined || at < next)) next = at;
    }
    return next;
  };

  /** One pass: the business up to min(now, horizon), then every delivery due. */
  const step = () => {
    const now = clock.now();
    const limit = Math.min(now, horizon);
    for (const w of worlds) w.business.runUntil(limit);
    businessRanUntil = Math.max(businessRanUntil, limit);
    dispatcher.runDue(now);
    // Only while the business is bounded: jumping an endless business would just run it faster.
    if (drainFastForward > 0 && Number.isFinite(horizon) && !dispatcher.hasInFlight) {
      const candidates = [dispatcher.nextDueAt(), nextBusinessAt()].filter((t): t is number => t !== undefined);
      if (candidates.length > 0 && Math.min(...candidates) > now) {
        clock.jumpTo(Math.min(...candidates));
        return step();
      }
    }
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      if (w?.check()) {
        waiters.splice(i, 1);
        w.resolve();
      }
    }
  };

  const realWait = (): number => {
    // A horizon already reached is no reason to wake (after pause() or runFor() it stays behind the
    // running clock, and waking for it would spin the loop).
    const dueTimes = [dispatcher.busy ? undefined : dispatcher.nextDueAt(), nextBusinessAt(), Number.isFinite(horizon) && horizon > clock.now() ? horizon : undefined];
    let wait = 250;
    for (const at of dueTimes) if (at !== undefined) wait = Math.min(wait, clock.realDelayUntil(at));
    return wait;
  };

  const loop = (async () => {
    while (!stopped) {
      step();
      const ms = realWait();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, ms));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();

  const until = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      waiters.push({ check, resolve });
      wake?.();
    });

  const sim: Simulator = {
    url,
    seed,
    apiKeys,
    secrets,
    signatureHeader,
    bank: {
      sandbox: { merchantIban: world('sandbox').business.merchantIban, providerIban: world('sandbox').business.providerIban },
      production: { merchantIban: world('production').business.merchantIban, providerIban: world('production').business.providerIban },
    },
    now: () => clock.now(),
    async advance(simulatedMs) {
      horizon += simulatedMs;
      clock.jumpTo(horizon);
      step();
    },
    async runFor(simulatedMs) {
      horizon += simulatedMs;
      const target = horizon;
      clock.resume();
      await until(() => clock.now() >= target && (nextBusinessAt() ?? Infinity) > target);
    },
    play() {
      horizon = Number.POSITIVE_INFINITY;
      clock.resume();
      wake?.();
    },
    pause() {
      horizon = Math.min(horizon, businessRanUntil);
      clock.resume();
      wake?.();
    },
    async drain(drainOptions = {}) {
      const fastForward = drainOptions.fastForward ?? true;
      if (!fastForward) clock.resume();
      else drainFastForward += 1;
      try {
        await until(() => dispatcher.idle);
      } finally {
        if (fastForward) drainFastForward -= 1;
      }
    },
    groundTruth(gtOptions = {}) {
      const chosen = worlds.filter((w) => gtOptions.environment === undefined || w.env === gtOptions.environment);
      const found = expectedFindings(chosen.flatMap((w) => w.planner.records));
      return {
        seed,
        start_time: isoSeconds(start),
        sim_time: isoSeconds(clock.now()),
        discrepancies: found.discrepancies,
        rejected_deliveries: found.rejected,
        benign_faults: found.benign,
        uncertain_deliveries: dispatcher.uncertain.filter((u) => gtOptions.environment === undefined || u.environment === gtOptions.environment),
      };
    },
    async writeGroundTruth(file, gtOptions) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, `${JSON.stringify(sim.groundTruth(gtOptions), null, 2)}\n`, 'utf8');
    },
    async writeStatements(dir) {
      const files: string[] = [];
      // As of the business's own time, not the clock's: drain() jumps the clock ahead to late
      // deliveries, past what the business has played, and a statement "created" then claimed whole
      // days whose bookings a later statement added (a false payout_not_on_statement in between).
      const asOf = Math.min(clock.now(), businessRanUntil);
      for (const w of worlds) files.push(...(await writeStatementFiles(dir, w.business, asOf, variantRates.remittanceReferences)));
      return files;
    },
    async writePayoutReports(dir, reportOptions = {}) {
      const files: string[] = [];
      for (const w of worlds) {
        files.push(...(await writePayoutReportFiles(dir, w.env, w.business.payouts, terms.currency, reportForm(seed, w.env), reportOptions.format ?? 'both')));
      }
      return files;
    },
    stats: () => ({
      ...dispatcher.stats(),
      events,
      simTime: isoSeconds(clock.now()),
      orders: { sandbox: world('sandbox').business.orders.length, production: world('production').business.orders.length },
    }),
    attempts: () => dispatcher.attempts,
    plannedDeliveries: () => planned,
    registrations: (env) => registrations[env],
    register: (env, topic, address) => register(env, topic, address).registration,
    waitForRegistration: () =>
      registrations.sandbox.length + registrations.production.length > 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => registrationWaiters.push(resolve)),
    async stop() {
      if (stopped) return;
      stopped = true;
      wake?.();
      await loop;
      await dispatcher.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const w of waiters.splice(0)) w.resolve();
    },
  };
  return sim;
}
