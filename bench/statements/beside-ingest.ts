import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqlClient } from '../../src/db/database.js';
import { checkpoint, fixedRate, makeDeliveries, maxThroughput, startTarget } from '../ingest/index.js';
import { benchDatabase, percentile } from '../support.js';
import { writeCamt } from './files.js';

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * VACUUM (ANALYZE) of the whole database, before each stretch alone: after the import it does what
 * autovacuum would do soon after a million lines were written, before the stretch instead of by
 * chance inside it. Returns the seconds it took.
 */
async function vacuumAnalyze(databaseUrl: string): Promise<number> {
  const sql = createSqlClient(databaseUrl, { poolMax: 1 });
  const started = performance.now();
  try {
    await sql.unsafe('vacuum (analyze)');
  } finally {
    await sql.end({ timeout: 5 });
  }
  return round((performance.now() - started) / 1000);
}

/**
 * Issue 15: "while a 1,000,000-entry import runs, acknowledgement p99 stays under 100 ms"; issue 25:
 * at most twice its p99 alone, in the same run. One
 * daemon process (bench/ingest/target.ts: the receiver and, on its 'inbox' message, the statement
 * inbox, which imports each file in a child process) takes signed deliveries at a fixed rate (open
 * loop, latency from when each was due) in 5 s windows: 20 s alone, then for as long as the inbox
 * imports a CAMT.053 of 1,000,000 entries (quick 100,000) in daily statements of 4,000, then 20 s
 * alone again. The baseline of this run is the p99 of both stretches alone together: the import
 * takes minutes, and on a shared machine the p99 of one 20 s stretch alone swung from 6 to 24 ms
 * between runs (bench/README.md, import-ingest). Each stretch alone opens with a CHECKPOINT, and the
 * statement file is on disk (fsync) before the first, so neither the checkpoint the bench's own
 * setup left due nor the writeback of the file's 502 MiB falls into it by chance; before each, the
 * database is vacuumed and analysed (vacuumAnalyze), so autovacuum's work on what the import
 * wrote, which is the import's cost, does not fall into the second either.
 */
export async function runImportBesideIngestBench(opts: { quick?: boolean } = {}): Promise<Record<string, unknown>> {
  const entries = opts.quick ? 100_000 : 1_000_000;
  const rate = 500;
  const db = await benchDatabase('import_ingest');
  const dir = mkdtempSync(join(tmpdir(), 'bnpl-import-ingest-'));
  const staged = join(dir, 'statement.camt053.xml');
  await writeCamt(staged, entries, 4000);
  const fd = openSync(staged, 'r');
  fsyncSync(fd);
  closeSync(fd);
  process.env.RECON_DATA_DIR = dir;
  const { url, child } = await startTarget('daemon', db.url);
  delete process.env.RECON_DATA_DIR;
  try {
    await maxThroughput(url, makeDeliveries(2000), 32); // warm-up: JIT, pool connections, prepared statements
    const aloneStretch = async () => {
      const vacuumSeconds = await vacuumAnalyze(db.url);
      const checkpointed = await checkpoint(db.url);
      const latencies: number[] = [];
      const windows: { p99Ms: number; failures: number }[] = [];
      for (let i = 0; i < 4; i += 1) {
        const w = await fixedRate(url, makeDeliveries(rate * 5), rate, latencies);
        windows.push({ p99Ms: round(w.p99Ms), failures: w.failures });
      }
      latencies.sort((a, b) => a - b);
      return { latencies, windows, checkpointed, vacuumSeconds };
    };
    const summary = (sorted: number[], windows: readonly { failures: number }[]) => ({
      requests: sorted.length,
      failures: windows.reduce((sum, w) => sum + w.failures, 0),
      p50Ms: round(percentile(sorted, 0.5)),
      p99Ms: round(percentile(sorted, 0.99)),
      maxMs: round(sorted.at(-1) ?? Number.NaN),
    });
    const describeAlone = (stretch: Awaited<ReturnType<typeof aloneStretch>>) => ({
      ...summary(stretch.latencies, stretch.windows),
      windowP99Ms: stretch.windows.map((w) => w.p99Ms),
      checkpointed: stretch.checkpointed,
      vacuumSecondsBefore: stretch.vacuumSeconds,
    });
    const aloneBefore = await aloneStretch();

    mkdirSync(join(dir, 'inbox'), { recursive: true });
    renameSync(staged, join(dir, 'inbox', 'statement.camt053.xml'));
    let finished: { at: number } | undefined;
    child.on('message', (message) => {
      if (message && typeof message === 'object' && 'inbox' in message) finished = { at: performance.now() };
    });
    const started = performance.now();
    child.send('inbox');
    const latencies: number[] = [];
    const windows: { p99Ms: number; maxMs: number; failures: number }[] = [];
    while (finished === undefined) {
      const w = await fixedRate(url, makeDeliveries(rate * 5), rate, latencies);
      windows.push({ p99Ms: round(w.p99Ms), maxMs: round(w.maxMs), failures: w.failures });
    }
    latencies.sort((a, b) => a - b);
    const aloneAfter = await aloneStretch();
    const aloneLatencies = [...aloneBefore.latencies, ...aloneAfter.latencies].sort((a, b) => a - b);
    const aloneP99 = percentile(aloneLatencies, 0.99);
    const sql = createSqlClient(db.url, { poolMax: 1 });
    const [stored] = await sql<{ lines: number; deliveries: number }[]>`
      select (select count(*)::int from statement_lines) as lines, (select count(*)::int from webhook_deliveries) as deliveries`;
    await sql.end({ timeout: 5 });
    const duringP99 = percentile(latencies, 0.99);
    return {
      part: 'import-ingest',
      quick: Boolean(opts.quick),
      description: `deliveries at ${rate}/s (open loop) to the daemon's receiver in 5 s windows: 20 s alone, then while its statement inbox imports a CAMT.053 of ${entries} entries (daily statements of 4,000) in its child process, then 20 s alone again; the baseline is both stretches alone together`,
      entries,
      importSeconds: round((finished.at - started) / 1000),
      statementLinesStored: stored?.lines,
      imported: stored?.lines === entries,
      deliveriesStored: stored?.deliveries,
      alone: {
        ...summary(aloneLatencies, [...aloneBefore.windows, ...aloneAfter.windows]),
        before: describeAlone(aloneBefore),
        after: describeAlone(aloneAfter),
      },
      duringImport: {
        requests: latencies.length,
        failures: windows.reduce((s, w) => s + w.failures, 0),
        p50Ms: round(percentile(latencies, 0.5)),
        p99Ms: round(duringP99),
        maxMs: round(latencies.at(-1) ?? Number.NaN),
        windows: windows.length,
        worstWindowP99Ms: Math.max(...windows.map((w) => w.p99Ms)),
        windowP99Ms: windows.map((w) => w.p99Ms),
      },
      ratioP99DuringToAlone: round(duringP99 / aloneP99),
      targets: {
        // Issue 15.
        p99DuringImportMs: { target: '< 100', value: round(duringP99), met: stored?.lines === entries && duringP99 < 100 },
        // Issue 25: against the receiver alone in the same run.
        ratioP99DuringToAlone: { target: '<= 2', value: round(duringP99 / aloneP99), met: stored?.lines === entries && duringP99 <= 2 * aloneP99 },
      },
    };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
