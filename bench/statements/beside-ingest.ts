import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqlClient } from '../../src/db/database.js';
import { fixedRate, makeDeliveries, maxThroughput, startTarget } from '../ingest/index.js';
import { benchDatabase, percentile } from '../support.js';
import { writeCamt } from './files.js';

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * Issue 15: "while a 1,000,000-entry import runs, acknowledgement p99 stays under 100 ms"; issue 25:
 * at most twice its p99 alone, in the same run. One
 * daemon process (bench/ingest/target.ts: the receiver and, on its 'inbox' message, the statement
 * inbox, which imports each file in a child process) takes signed deliveries at a fixed rate (open
 * loop, latency from when each was due): first 20 s alone (the baseline of this run), then in 5 s
 * windows for as long as the inbox imports a CAMT.053 of 1,000,000 entries (quick 100,000) in
 * daily statements of 4,000.
 */
export async function runImportBesideIngestBench(opts: { quick?: boolean } = {}): Promise<Record<string, unknown>> {
  const entries = opts.quick ? 100_000 : 1_000_000;
  const rate = 500;
  const db = await benchDatabase('import_ingest');
  const dir = mkdtempSync(join(tmpdir(), 'bnpl-import-ingest-'));
  const staged = join(dir, 'statement.camt053.xml');
  await writeCamt(staged, entries, 4000);
  process.env.RECON_DATA_DIR = dir;
  const { url, child } = await startTarget('daemon', db.url);
  delete process.env.RECON_DATA_DIR;
  try {
    await maxThroughput(url, makeDeliveries(2000), 32); // warm-up: JIT, pool connections, prepared statements
    const alone = await fixedRate(url, makeDeliveries(rate * 20), rate);

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
    const sql = createSqlClient(db.url, { poolMax: 1 });
    const [stored] = await sql<{ lines: number; deliveries: number }[]>`
      select (select count(*)::int from statement_lines) as lines, (select count(*)::int from webhook_deliveries) as deliveries`;
    await sql.end({ timeout: 5 });
    const duringP99 = percentile(latencies, 0.99);
    return {
      part: 'import-ingest',
      quick: Boolean(opts.quick),
      description: `deliveries at ${rate}/s (open loop) to the daemon's receiver, 20 s alone, then in 5 s windows while its statement inbox imports a CAMT.053 of ${entries} entries (daily statements of 4,000) in its child process`,
      entries,
      importSeconds: round((finished.at - started) / 1000),
      statementLinesStored: stored?.lines,
      imported: stored?.lines === entries,
      deliveriesStored: stored?.deliveries,
      alone: { requests: alone.requests, failures: alone.failures, p50Ms: round(alone.p50Ms), p99Ms: round(alone.p99Ms), maxMs: round(alone.maxMs) },
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
      ratioP99DuringToAlone: round(duringP99 / alone.p99Ms),
      targets: {
        // Issue 15.
        p99DuringImportMs: { target: '< 100', value: round(duringP99), met: stored?.lines === entries && duringP99 < 100 },
        // Issue 25: against the receiver alone in the same run.
        ratioP99DuringToAlone: { target: '<= 2', value: round(duringP99 / alone.p99Ms), met: stored?.lines === entries && duringP99 <= 2 * alone.p99Ms },
      },
    };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
