import { readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdtemp, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSqlClient, databaseOver } from '../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.js';
import { applyMigrations } from '../src/ledger/migrate.js';
import { silentLogger } from '../src/log/logger.js';

export interface BenchDatabase {
  url: string;
  /** Drops and recreates the database with every migration applied. */
  reset(): Promise<void>;
  drop(): Promise<void>;
}

let embedded: EmbeddedServer | undefined;

/** BENCH_DATABASE_URL, else TEST_DATABASE_URL, else an embedded server started for the run. */
export async function benchServerUrl(): Promise<string> {
  const fromEnv = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (fromEnv) return fromEnv;
  if (!embedded) {
    const dir = await mkdtemp(path.join(tmpdir(), 'bnpl-bench-pg-'));
    await chmod(dir, 0o755);
    embedded = await startEmbeddedPostgres(dir, silentLogger());
  }
  return embedded.url;
}

export async function stopBenchServer(): Promise<void> {
  await embedded?.stop();
  embedded = undefined;
}

export async function benchDatabase(label: string): Promise<BenchDatabase> {
  const server = await benchServerUrl();
  const name = `bench_${label}_${randomBytes(3).toString('hex')}`;
  const url = new URL(server);
  url.pathname = `/${name}`;
  const admin = async (statement: string) => {
    const sql = createSqlClient(server, { poolMax: 1 });
    try {
      await sql.unsafe(statement);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };
  const db: BenchDatabase = {
    url: url.toString(),
    async reset() {
      await admin(`drop database if exists "${name}" with (force)`);
      await admin(`create database "${name}"`);
      const sql = createSqlClient(url.toString(), { poolMax: 2 });
      const database = databaseOver(sql);
      await applyMigrations(database, silentLogger());
      await database.close();
    },
    drop: () => admin(`drop database if exists "${name}" with (force)`),
  };
  await db.reset();
  return db;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

/**
 * CPU seconds used so far by every process named postgres on this host (Linux /proc; undefined
 * elsewhere). The server shares the machine with the code measured, so its share of the CPU decides
 * the pace as much as that code's own.
 */
export function postgresCpuSeconds(): number | undefined {
  try {
    const ticksPerSecond = 100; // USER_HZ on Linux
    let ticks = 0;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const close = stat.lastIndexOf(')');
        if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
        const fields = stat.slice(close + 2).split(' ');
        // utime, stime, cutime, cstime (fields 14-17): a backend that has ended counts through
        // the postmaster's cutime/cstime once reaped.
        ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      } catch {
        // The process ended between listing and reading.
      }
    }
    return ticks / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) used so far by one process (Linux /proc; 0 elsewhere). */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ on Linux
  } catch {
    return 0;
  }
}

/** The middle value (the upper of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
}

/** a / b to two decimals. */
export function ratio(a: number, b: number): number {
  return Math.round((a / b) * 100) / 100;
}

/**
 * Each round's ratio, numerators[i] / denominators[i]: for A and B measured alternately on a shared
 * machine, a round's two figures saw the same machine, so their ratio is steadier than the ratio of
 * the medians.
 */
export function pairedRatios(numerators: readonly number[], denominators: readonly number[]): number[] {
  if (numerators.length !== denominators.length) throw new RangeError(`${numerators.length} numerators for ${denominators.length} denominators`);
  return numerators.map((n, i) => ratio(n, denominators[i] as number));
}

/** A seeded generator (mulberry32), so the same ratios always give the same interval. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The geometric mean of ratios, with a 95 % percentile-bootstrap interval (10,000 resamples). */
export function geometricMeanInterval(ratios: readonly number[]): { mean: number; low: number; high: number } {
  const logs = ratios.map(Math.log);
  const mean = (xs: readonly number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;
  const random = seeded(11);
  const resampled = Array.from({ length: 10_000 }, () => mean(logs.map(() => logs[Math.floor(random() * logs.length)] as number))).sort((a, b) => a - b);
  const round = (x: number) => Math.round(Math.exp(x) * 1000) / 1000;
  return { mean: round(mean(logs)), low: round(resampled[249] as number), high: round(resampled[9749] as number) };
}
