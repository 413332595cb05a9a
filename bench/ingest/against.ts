/**
 * Ingest against a revision: is the daemon's receiver of this checkout slower than that of an
 * earlier revision (`--against=<rev>`, default DEFAULT_AGAINST; bench/revision.ts fetches it)?
 * Each side runs its own daemon target (bench/ingest/target.ts, or bench/ingest-target.ts in
 * revisions before bench/ had a folder per part) in its own process, on its own fresh database
 * holding its own migrations, one Postgres server for both. Both run at once; the load goes to one
 * at a time, closed loop at 64 connections, in rounds of one slice each, which side goes first
 * alternating. A slice lasts about half a second, so the two figures of a round saw nearly the
 * same machine: on this shared 2-core VM, runs of 40,000 deliveries one after the other gave
 * paired ratios that spread over ±20 %. Judged by the geometric mean of the rounds' ratios (this
 * checkout's rate over the revision's: above 1, this checkout is faster) and its 95 % bootstrap
 * interval. Beside throughput: each target's CPU per delivery, and its scavenges
 * (bench/ingest/gc-probe.ts), whose time grows when objects live longer.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { createSqlClient } from '../../src/db/database.js';
import { checkoutRevision, currentRevision, repoRoot } from '../revision.js';
import { benchServerUrl, geometricMeanInterval, median, pairedRatios, processCpuSeconds, ratio } from '../support.js';
import type { GcSums } from './gc-probe.js';
import { makeDeliveries, maxThroughput, startTarget as startIngestTarget } from './index.js';

/**
 * The parent of issue 11's group-commit merge (b9fecb3): the receiver with its own queue, before
 * the one batcher, the metrics built once and the typed-row columns taken from the schema.
 */
export const DEFAULT_AGAINST = 'b9fecb3^1';

const probe = fileURLToPath(new URL('./gc-probe.ts', import.meta.url));

/** A new empty database with the tree's own migrations, applied in its journal's order. */
async function freshLedger(tree: string, label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const server = await benchServerUrl();
  const name = `bench_against_${label}_${randomBytes(3).toString('hex')}`;
  const admin = createSqlClient(server, { poolMax: 1 });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  const drop = async () => {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end({ timeout: 5 });
  };
  const sql = createSqlClient(url.toString(), { poolMax: 1 });
  try {
    const journal = JSON.parse(readFileSync(path.join(tree, 'migrations', 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
    for (const { tag } of journal.entries) {
      for (const statement of readFileSync(path.join(tree, 'migrations', `${tag}.sql`), 'utf8').split('--> statement-breakpoint')) {
        if (statement.trim()) await sql.unsafe(statement);
      }
    }
  } catch (error) {
    await drop();
    throw error;
  } finally {
    await sql.end({ timeout: 5 });
  }
  return { url: url.toString(), drop };
}

/** Sends an IPC request to the target's gc probe and waits for its answer when one is due. */
function gcProbe(child: ChildProcess, request: 'reset'): void;
function gcProbe(child: ChildProcess, request: 'read'): Promise<GcSums>;
function gcProbe(child: ChildProcess, request: 'reset' | 'read'): void | Promise<GcSums> {
  if (request === 'reset') return void child.send({ gcProbe: 'reset' });
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      const sums = (message as { gcProbe?: GcSums } | null)?.gcProbe;
      if (sums === undefined) return;
      child.off('message', onMessage);
      resolve(sums);
    };
    child.on('message', onMessage);
    child.send({ gcProbe: 'read' });
  });
}

interface Target {
  child: ChildProcess;
  url: string;
  pool: Pool;
  ledger: { url: string; drop: () => Promise<void> };
}

async function startTarget(tree: string, label: string): Promise<Target> {
  const file = ['bench/ingest/target.ts', 'bench/ingest-target.ts'].map((f) => path.join(tree, f)).find((f) => existsSync(f));
  if (!file) throw new Error(`${tree} has no ingest target`);
  const ledger = await freshLedger(tree, label);
  let started: { url: string; child: ChildProcess };
  try {
    started = await startIngestTarget('daemon', ledger.url, { tree, file, imports: [probe] });
  } catch (error) {
    await ledger.drop();
    throw error;
  }
  const { child, url } = started;
  return { child, url, pool: new Pool(new URL(url).origin, { connections: CONNECTIONS, pipelining: 1 }), ledger };
}

async function stopTarget(target: Target): Promise<void> {
  await target.pool.close();
  if (target.child.exitCode === null && target.child.signalCode === null) {
    const exited = new Promise((resolve) => target.child.once('exit', resolve));
    target.child.kill('SIGTERM');
    await exited;
  }
  await target.ledger.drop();
}

const CONNECTIONS = 64;

export async function runIngestAgainstBench(opts: { quick?: boolean; against?: string; rounds?: number } = {}): Promise<Record<string, unknown>> {
  const rev = opts.against ?? DEFAULT_AGAINST;
  const revision = await checkoutRevision(rev);
  const againstTree = revision.dir;
  const rounds = opts.rounds ?? (opts.quick ? 7 : 31);
  const slice = opts.quick ? 2_000 : 4_000;
  const sides = ['current', 'against'] as const;
  const targets: Partial<Record<(typeof sides)[number], Target>> = {};
  try {
    targets.current = await startTarget(repoRoot, 'current');
    targets.against = await startTarget(againstTree, 'against');
    const live = targets as Record<(typeof sides)[number], Target>;
    for (const side of sides) await maxThroughput(live[side].url, makeDeliveries(2000), CONNECTIONS, live[side].pool); // warm-up: JIT, connections, prepared statements
    const slices: Record<(typeof sides)[number], { committedPerSecond: number; seconds: number; cpuSeconds: number; failures: number }[]> = { current: [], against: [] };
    for (const side of sides) gcProbe(live[side].child, 'reset');
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? sides : ([...sides].reverse() as (typeof sides)[number][]);
      for (const side of order) {
        const target = live[side];
        const deliveries = makeDeliveries(slice);
        const cpuBefore = processCpuSeconds(target.child.pid as number);
        const result = await maxThroughput(target.url, deliveries, CONNECTIONS, target.pool);
        slices[side].push({ committedPerSecond: result.committedPerSecond, seconds: result.seconds, cpuSeconds: processCpuSeconds(target.child.pid as number) - cpuBefore, failures: result.failures });
      }
      process.stderr.write(`  round ${round + 1}/${rounds}: current ${slices.current.at(-1)?.committedPerSecond}/s, against ${slices.against.at(-1)?.committedPerSecond}/s\n`);
    }
    const gc = { current: await gcProbe(live.current.child, 'read'), against: await gcProbe(live.against.child, 'read') };
    const perRound = pairedRatios(slices.current.map((s) => s.committedPerSecond), slices.against.map((s) => s.committedPerSecond));
    const summary = (side: (typeof sides)[number]) => {
      const runs = slices[side];
      const delivered = runs.length * slice;
      const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
      return {
        committedPerSecond: Math.round(runs.reduce((sum, r) => sum + r.committedPerSecond * r.seconds, 0) / seconds),
        medianSlicePerSecond: median(runs.map((r) => r.committedPerSecond)),
        cpuUsPerDelivery: Math.round((runs.reduce((sum, r) => sum + r.cpuSeconds, 0) / delivered) * 1e6 * 10) / 10,
        scavengeMsPer1000Deliveries: Math.round((gc[side].scavengeMs / delivered) * 1000 * 100) / 100,
        gc: gc[side],
        failures: runs.reduce((sum, r) => sum + r.failures, 0),
      };
    };
    const current = summary('current');
    const against = summary('against');
    const interval = geometricMeanInterval(perRound);
    return {
      part: 'ingest-against',
      quick: Boolean(opts.quick),
      description: `the daemon receiver of this checkout against that of ${rev}, both running at once, each in its own process on its own fresh database with its own migrations (one Postgres server); closed loop at ${CONNECTIONS} connections, in ${rounds} rounds of one slice of ${slice} deliveries each, which side goes first alternating; judged by the geometric mean of the rounds' paired ratios and its 95 % bootstrap interval`,
      against: { rev, sha: revision.sha, subject: revision.subject },
      current: currentRevision(),
      rounds,
      deliveriesPerSlice: slice,
      ratio: interval.mean,
      ratioInterval95: [interval.low, interval.high],
      ratioMedian: median(perRound),
      ratioPerRound: perRound,
      ratioOfThroughputs: ratio(current.committedPerSecond, against.committedPerSecond),
      cpuPerDeliveryRatio: ratio(current.cpuUsPerDelivery, against.cpuUsPerDelivery),
      note: 'ratio: this checkout\'s committed deliveries/s over the revision\'s, above 1 faster (geometric mean of the rounds); cpuPerDeliveryRatio: above 1 more CPU per delivery',
      results: { current, against },
      target: { ratio: 1, judged: 'no slower than the revision: the interval reaches 1 or above' },
    };
  } finally {
    for (const side of sides) if (targets[side]) await stopTarget(targets[side] as Target);
  }
}
