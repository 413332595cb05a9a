import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { createSqlClient } from '../../src/db/database.js';
import { computeSignature } from '../../src/webhooks/signature.js';
import { benchDatabase, geometricMeanInterval, median, pairedRatios, percentile, postgresCpuSeconds, processCpuSeconds, type BenchDatabase } from '../support.js';

/** The secret every bench delivery is signed with, and every ingest target checks. */
export const SECRET = 'whsec_bench_0113cbfbb1867a2b31609c7ebc9b7f27';

interface Delivery {
  body: Buffer;
  signature: string;
}

export function makeDeliveries(count: number): Delivery[] {
  return Array.from({ length: count }, (_, i) => {
    const body = Buffer.from(
      JSON.stringify({
        topic: 'order/confirmed',
        order_uuid: randomUUID(),
        order_state: 'confirmed',
        external_reference_id: `ORD-${i}`,
        event_time: `2026-11-20T10:00:00.${String(i).padStart(9, '0')}Z`,
        buyer: { uuid: randomUUID(), name: 'Acme GmbH', legal_form: 'GmbH' },
        net_term: 30,
      }),
    );
    return { body, signature: computeSignature(body, SECRET) };
  });
}

type TargetMode = 'daemon' | 'baseline' | 'unbatched' | 'floor';

/**
 * Starts an ingest target process and waits for its `READY <url>` line. `tree`: another checkout's
 * target (bench/ingest/against.ts), run from that tree with its own tsx, with `imports` loaded first.
 */
export async function startTarget(
  mode: TargetMode,
  databaseUrl: string,
  other?: { tree: string; file: string; imports: string[] },
): Promise<{ url: string; child: ChildProcess }> {
  const file = other?.file ?? new URL('./target.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', ...(other?.imports ?? []).flatMap((i) => ['--import', i]), file], {
    ...(other ? { cwd: other.tree } : {}),
    env: { ...process.env, MODE: mode, DATABASE_URL: databaseUrl, WEBHOOK_SECRET: SECRET },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    if (line.startsWith('READY ')) {
      child.stdout?.resume(); // later output must not fill the pipe and stall the target
      return { url: line.slice(6), child };
    }
  }
  throw new Error(`${mode} target exited before it was ready`);
}

async function post(pool: Pool, path: string, delivery: Delivery): Promise<number> {
  const response = await pool.request({
    method: 'POST',
    path,
    body: delivery.body,
    headers: { 'content-type': 'application/json', 'x-service-signature': delivery.signature },
  });
  await response.body.dump();
  return response.statusCode;
}

/**
 * Closed loop: `connections` requests always in flight, as fast as the server answers. With `pool`,
 * its connections are used (and left open) instead of a pool opened and closed for this call.
 */
export async function maxThroughput(url: string, deliveries: Delivery[], connections: number, pool?: Pool) {
  const target = new URL(url);
  const client = pool ?? new Pool(target.origin, { connections, pipelining: 1 });
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < deliveries.length) {
        const delivery = deliveries[next++] as Delivery;
        if ((await post(client, target.pathname, delivery)) !== 200) failures += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (!pool) await client.close();
  return { connections, acknowledged: deliveries.length - failures, failures, seconds, committedPerSecond: Math.round((deliveries.length - failures) / seconds) };
}

/**
 * Open loop at a fixed rate: latency is measured from when each request was due, so a stalled
 * server is charged for the requests it delayed (no coordinated omission).
 */
export async function fixedRate(url: string, deliveries: Delivery[], ratePerSecond: number, collect?: number[]) {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 128, pipelining: 1 });
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < deliveries.length; i += 1) {
    const due = started + (i * 1000) / ratePerSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      post(pool, target.pathname, deliveries[i] as Delivery).then((status) => {
        if (status !== 200) failures += 1;
        latencies.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(inFlight);
  await pool.close();
  latencies.sort((a, b) => a - b);
  collect?.push(...latencies);
  return { rate: ratePerSecond, requests: deliveries.length, failures, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), maxMs: latencies.at(-1) ?? Number.NaN };
}

/**
 * A CHECKPOINT before each latency window, so that a checkpoint left due by earlier load never
 * starts inside it by chance (one did: p99 66-120 ms in those windows, 6-16 ms in the others).
 * The window then opens with the full-page-write surge that follows every checkpoint, the part of
 * the checkpoint cycle that costs commits most WAL; only the checkpointer's own writes are outside.
 * Needs a superuser or pg_checkpoint; without, the window is left to chance and the result says so.
 */
export async function checkpoint(databaseUrl: string): Promise<boolean> {
  const sql = createSqlClient(databaseUrl, { poolMax: 1 });
  try {
    await sql.unsafe('checkpoint');
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Three windows at the rate, each after a checkpoint; the run with the median p99 is reported, with all three. */
async function latencyWindows(url: string, databaseUrl: string, count: number, ratePerSecond: number) {
  const runs = [];
  let checkpointed = true;
  for (let i = 0; i < 3; i += 1) {
    checkpointed = (await checkpoint(databaseUrl)) && checkpointed;
    runs.push(await fixedRate(url, makeDeliveries(count), ratePerSecond));
  }
  const median = [...runs].sort((a, b) => a.p99Ms - b.p99Ms)[1] as (typeof runs)[number];
  return {
    p50Ms: round(median.p50Ms),
    p99Ms: round(median.p99Ms),
    runs: runs.map((r) => ({ p50Ms: round(r.p50Ms), p99Ms: round(r.p99Ms), maxMs: round(r.maxMs) })),
    checkpointedBeforeEach: checkpointed,
    failures: runs.reduce((sum, r) => sum + r.failures, 0),
  };
}

/**
 * Closed-loop runs at 64 and at 256 concurrent senders. CPU per delivery (server process, Postgres,
 * this load generator) is the steadier figure on a shared 2-core machine; their sum against the
 * two cores' capacity shows how busy the run kept them.
 */
async function closedLoopLevels(url: string, child: ChildProcess, count: number) {
  const levels = [];
  for (const connections of [64, 256]) {
    const serverCpu = processCpuSeconds(child.pid as number);
    const postgresCpu = postgresCpuSeconds() ?? 0;
    const loadgenCpu = process.cpuUsage();
    const run = await maxThroughput(url, makeDeliveries(count), connections);
    const loadgen = process.cpuUsage(loadgenCpu);
    const server = processCpuSeconds(child.pid as number) - serverCpu;
    const postgres = (postgresCpuSeconds() ?? 0) - postgresCpu;
    const loadgenSeconds = (loadgen.user + loadgen.system) / 1e6;
    const perDelivery = (seconds: number) => Math.round((seconds / run.acknowledged) * 1e6);
    levels.push({
      ...run,
      seconds: round(run.seconds),
      serverCpuMicrosPerDelivery: perDelivery(server),
      postgresCpuMicrosPerDelivery: perDelivery(postgres),
      loadgenCpuMicrosPerDelivery: perDelivery(loadgenSeconds),
      coresBusyPercent: Math.round(((server + postgres + loadgenSeconds) / run.seconds / 2) * 100),
    });
  }
  return levels;
}

/** The connection counts issue 26 asks the daemon to keep up with the hand-written receiver at. */
const CONNECTION_LEVELS = [8, 32, 64, 256] as const;

/**
 * The daemon against the hand-written baseline at each connection count, both running at once,
 * each in its own process on its own fresh database: the load (this process, closed loop) goes to
 * one at a time in slices, which one goes first alternating by round, so the two figures of a round
 * saw nearly the same machine (bench/ingest/against.ts says why slices: runs one after the other
 * spread over ±20 % on this shared 2-core VM). Per level: each side's median slice, the geometric
 * mean of the rounds' paired ratios with its 95 % bootstrap interval, and each side's CPU per
 * committed delivery (its process; Postgres, read for the whole server while only that side had load).
 */
async function daemonAgainstBaseline(rounds: number, slice: number) {
  const sides = ['daemon', 'baseline'] as const;
  type Side = (typeof sides)[number];
  const started: Partial<Record<Side, { db: BenchDatabase; url: string; child: ChildProcess }>> = {};
  try {
    for (const side of sides) {
      const db = await benchDatabase(`ingest_${side}`);
      started[side] = { db, ...(await startTarget(side, db.url)) };
    }
    const live = started as Record<Side, { db: BenchDatabase; url: string; child: ChildProcess }>;
    const levels = [];
    for (const connections of CONNECTION_LEVELS) {
      const pools = Object.fromEntries(sides.map((side) => [side, new Pool(new URL(live[side].url).origin, { connections, pipelining: 1 })])) as Record<Side, Pool>;
      try {
        for (const side of sides) await maxThroughput(live[side].url, makeDeliveries(Math.max(1000, connections * 8)), connections, pools[side]); // warm-up: the level's connections
        const slices: Record<Side, { perSecond: number; committed: number; serverCpu: number; postgresCpu: number; failures: number }[]> = { daemon: [], baseline: [] };
        for (let round = 0; round < rounds; round += 1) {
          const order = round % 2 === 0 ? sides : ([...sides].reverse() as Side[]);
          for (const side of order) {
            const serverBefore = processCpuSeconds(live[side].child.pid as number);
            const postgresBefore = postgresCpuSeconds() ?? 0;
            const run = await maxThroughput(live[side].url, makeDeliveries(slice), connections, pools[side]);
            slices[side].push({
              perSecond: run.committedPerSecond,
              committed: run.acknowledged,
              serverCpu: processCpuSeconds(live[side].child.pid as number) - serverBefore,
              postgresCpu: (postgresCpuSeconds() ?? 0) - postgresBefore,
              failures: run.failures,
            });
          }
        }
        const ratios = pairedRatios(slices.daemon.map((s) => s.perSecond), slices.baseline.map((s) => s.perSecond));
        const interval = geometricMeanInterval(ratios);
        const cpu = (side: Side, of: 'serverCpu' | 'postgresCpu') => {
          const committed = slices[side].reduce((sum, s) => sum + s.committed, 0);
          return Math.round((slices[side].reduce((sum, s) => sum + s[of], 0) / committed) * 1e6);
        };
        const level = {
          connections,
          daemonPerSecond: median(slices.daemon.map((s) => s.perSecond)),
          baselinePerSecond: median(slices.baseline.map((s) => s.perSecond)),
          ratio: interval.mean,
          ratioInterval95: [interval.low, interval.high],
          ratioPerRound: ratios,
          daemonServerCpuMicrosPerDelivery: cpu('daemon', 'serverCpu'),
          baselineServerCpuMicrosPerDelivery: cpu('baseline', 'serverCpu'),
          daemonPostgresCpuMicrosPerDelivery: cpu('daemon', 'postgresCpu'),
          baselinePostgresCpuMicrosPerDelivery: cpu('baseline', 'postgresCpu'),
          failures: [...slices.daemon, ...slices.baseline].reduce((sum, s) => sum + s.failures, 0),
        };
        process.stderr.write(`  ${connections} connections: daemon ${level.daemonPerSecond}/s, baseline ${level.baselinePerSecond}/s, ratio ${level.ratio} (${interval.low}-${interval.high})\n`);
        levels.push(level);
      } finally {
        for (const side of sides) await pools[side].close();
      }
    }
    return levels;
  } finally {
    for (const side of sides) {
      const target = started[side];
      if (!target) continue;
      target.child.kill('SIGTERM');
      await once(target.child, 'exit');
      await target.db.drop();
    }
  }
}

const best = <T extends { committedPerSecond: number }>(levels: T[]): T => levels.reduce((top, level) => (level.committedPerSecond > top.committedPerSecond ? level : top));

/**
 * One target alone: its closed-loop levels at 64 and 256 connections (`throughput`), and its latency
 * windows at 5,000/s and 2,000/s (`latency`).
 */
async function measure(mode: Exclude<TargetMode, 'floor'>, db: BenchDatabase, counts: { throughput: number; latency: number }, what: { throughput: boolean; latency: boolean }) {
  await db.reset();
  const { url, child } = await startTarget(mode, db.url);
  try {
    await maxThroughput(url, makeDeliveries(2000), 32); // warm-up: JIT, pool connections, prepared statements
    // Each server's best level counts, so neither is judged at a concurrency that starves it.
    const levels = what.throughput ? await closedLoopLevels(url, child, counts.throughput) : [];
    const throughput = levels.length > 0 ? best(levels) : undefined;
    // 5,000/s is the target's rate; 2,000/s shows the latency well below either server's capacity.
    const latency = what.latency ? await latencyWindows(url, db.url, counts.latency, 5000) : undefined;
    const sustainable = what.latency ? await latencyWindows(url, db.url, Math.round(counts.latency / 2), 2000) : undefined;
    const sql = createSqlClient(db.url, { poolMax: 1 });
    const [row] = await sql<{ n: string }[]>`select count(*)::text as n from webhook_deliveries`;
    await sql.end();
    const committed = Number(row?.n ?? 0);
    return {
      ...(throughput ? { committedPerSecond: throughput.committedPerSecond, bestAtConnections: throughput.connections, throughputByConnections: levels } : {}),
      acknowledged: levels.reduce((sum, level) => sum + level.acknowledged, 0),
      failures: levels.reduce((sum, level) => sum + level.failures, 0) + (latency?.failures ?? 0) + (sustainable?.failures ?? 0),
      committedRows: committed,
      latencyAt5000PerSecond: latency,
      latencyAt2000PerSecond: sustainable,
    };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

/**
 * The floor: what HTTP over loopback and this load generator cost with nothing checked or stored.
 * No receiver can answer faster on this machine; the figures bound what any ratio could reach.
 */
async function measureFloor(databaseUrl: string, count: number) {
  const { url, child } = await startTarget('floor', databaseUrl); // never connects: postgres.js is lazy
  try {
    await maxThroughput(url, makeDeliveries(2000), 32);
    const levels = await closedLoopLevels(url, child, count);
    const top = best(levels);
    return {
      answeredPerSecond: top.committedPerSecond,
      bestAtConnections: top.connections,
      serverCpuMicrosPerRequest: top.serverCpuMicrosPerDelivery,
      loadgenCpuMicrosPerRequest: top.loadgenCpuMicrosPerDelivery,
      coresBusyPercent: top.coresBusyPercent,
    };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

export async function runIngestBench(opts: { quick?: boolean } = {}): Promise<Record<string, unknown>> {
  const counts = opts.quick ? { throughput: 10_000, latency: 10_000 } : { throughput: 60_000, latency: 25_000 };
  const paired = opts.quick ? { rounds: 5, slice: 2_000 } : { rounds: 15, slice: 4_000 };
  const byConnections = await daemonAgainstBaseline(paired.rounds, paired.slice);
  const db = await benchDatabase('ingest');
  try {
    const baseline = await measure('baseline', db, counts, { throughput: false, latency: true });
    const daemon = await measure('daemon', db, counts, { throughput: false, latency: true });
    const unbatched = await measure('unbatched', db, counts, { throughput: true, latency: false }); // below 5,000/s: its latency there is its queue
    const httpFloor = await measureFloor(db.url, counts.throughput);
    const bestOf = (side: 'daemonPerSecond' | 'baselinePerSecond') => Math.max(...byConnections.map((level) => level[side]));
    return {
      description: `signed order/confirmed deliveries over loopback from this process to server processes. Throughput: the daemon against the hand-written baseline at ${CONNECTION_LEVELS.join(', ')} connections, both running at once on their own databases, in ${paired.rounds} rounds of alternating slices of ${paired.slice} deliveries (geometric mean of the paired ratios, 95 % bootstrap interval). Latency: open loop at 5,000/s and 2,000/s, three windows each, each after a CHECKPOINT; the median p99 counts`,
      byConnections,
      daemon: { committedPerSecond: bestOf('daemonPerSecond'), ...daemon },
      baseline: { committedPerSecond: bestOf('baselinePerSecond'), ...baseline },
      throughputRatio: Math.min(...byConnections.map((level) => level.ratio)),
      // Not the target's baseline: the same checks and ledger writes as the daemon, one commit per request.
      unbatched,
      ratioToUnbatched: round(bestOf('daemonPerSecond') / (unbatched.committedPerSecond ?? Number.NaN)),
      httpFloor,
      targets: {
        committedPerSecond: 10_000,
        p99MsAt5000: 20,
        ratioToBaselineAtEachLevel: 1,
        met: {
          ratioAtEachLevel: byConnections.every((level) => level.ratio >= 1),
          p99At5000: (daemon.latencyAt5000PerSecond?.p99Ms ?? Infinity) <= 20,
          serverCpuPerDeliveryAtEachLevel: byConnections.every((level) => level.daemonServerCpuMicrosPerDelivery <= level.baselineServerCpuMicrosPerDelivery),
        },
      },
    };
  } finally {
    await db.drop();
  }
}
