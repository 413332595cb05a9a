/**
 * `npm run bench [-- --quick] [-- --only=ingest,ingest-against,poll,reconcile,reconcile-10m,statements,reparse,growth,import-ingest] [-- --deliveries N] [-- --reparse-control] [-- --rounds=N] [-- --against=REV [-- --at=REV]]`: runs each benchmark, which measures
 * its baseline in the same run and reports the ratio, prints the figures and writes them to
 * bench/results/latest.json (earlier figures are in its git history).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { runGrowthBench } from './growth/index.js';
import { runPartAgainst } from './against.js';
import { runIngestAgainstBench } from './ingest/against.js';
import { runIngestBench } from './ingest/index.js';
import { runPollBench } from './poll/index.js';
import { runReconcileBench, TEN_MILLION } from './reconcile/index.js';
import { runReparseBench } from './reparse/index.js';
import { runStatementsBench } from './statements/index.js';
import { runImportBesideIngestBench } from './statements/beside-ingest.js';
import { stopBenchServer } from './support.js';

const quick = process.argv.includes('--quick');
const control = process.argv.includes('--reparse-control');
const onlyArg = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
// growth: the year's size (deliveries loaded into the ledger); default 20,000,000, quick 1,000,000.
const deliveriesArg = process.argv.find((a) => a.startsWith('--deliveries='))?.slice('--deliveries='.length)
  ?? process.argv[process.argv.indexOf('--deliveries') + 1];
const deliveries = process.argv.some((a) => a.startsWith('--deliveries')) ? Number(deliveriesArg) : undefined;
if (deliveries !== undefined && !(Number.isInteger(deliveries) && deliveries > 0)) throw new Error('--deliveries wants a positive integer');
// --against=REV: each selected part is measured against the same part of that git revision
// (bench/against.ts; ingest: bench/ingest/against.ts) and its figures kept as `<part>-against`.
const against = process.argv.find((a) => a.startsWith('--against='))?.slice('--against='.length);
// --at=REV: with --against, that revision is measured instead of this checkout (parts other than ingest).
const atRev = process.argv.find((a) => a.startsWith('--at='))?.slice('--at='.length);
// Rounds of an against comparison (ingest: 31, quick 7; other parts: 3), and of the statements part (default 1: medians of N).
const roundsArg = process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length);
const rounds = roundsArg === undefined ? undefined : Number(roundsArg);
if (rounds !== undefined && !(Number.isInteger(rounds) && rounds > 0)) throw new Error('--rounds wants a positive integer');
const parts: Record<string, (o: { quick?: boolean; control?: boolean }) => Promise<Record<string, unknown>>> = {
  ingest: runIngestBench,
  'ingest-against': (o) => runIngestAgainstBench({ ...o, against, rounds }),
  poll: runPollBench,
  reconcile: runReconcileBench,
  // Not in the default run (about an hour and 60 GB of ledger): --only=reconcile-10m.
  'reconcile-10m': () => runReconcileBench({ large: TEN_MILLION, invoices: false }),
  statements: (o) => runStatementsBench({ ...o, rounds }),
  reparse: runReparseBench,
  growth: (o) => runGrowthBench({ ...o, deliveries }),
  'import-ingest': runImportBesideIngestBench,
};
const selected = onlyArg ? onlyArg.split(',') : Object.keys(parts).filter((name) => name !== 'reconcile-10m');
for (const name of selected) if (!parts[name]) throw new Error(`unknown benchmark ${name}; one of ${Object.keys(parts).join(', ')}`);
// With --against, each selected part's comparison runs instead of the part: ingest has its own.
const comparisonOf = (name: string): string => (name === 'ingest' || name === 'ingest-against' ? 'ingest-against' : `${name}-against`);
if (against !== undefined) {
  for (const name of selected) if (!parts[comparisonOf(name)]) parts[comparisonOf(name)] = (o) => runPartAgainst(name, { ...o, against, at: atRev, rounds });
}
const measured = against === undefined ? selected : [...new Set(selected.map(comparisonOf))];
if (atRev !== undefined && (against === undefined || measured.includes('ingest-against'))) throw new Error('--at goes with --against, for parts other than ingest');

// latest.json keeps every part's latest figures, each with the run it came from, so a run of some
// parts (--only) replaces only theirs; earlier figures are in the file's git history.
const latestUrl = new URL('./results/latest.json', import.meta.url);
const latest = (existsSync(latestUrl) ? JSON.parse(readFileSync(latestUrl, 'utf8')) : {}) as Record<string, unknown>;
const run = {
  startedAt: new Date().toISOString(),
  quick,
  machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
};
for (const name of measured) {
  const part = parts[name] as (typeof parts)[string];
  process.stderr.write(`bench ${name}${quick ? ' (quick)' : ''}...\n`);
  let figures: Record<string, unknown>;
  try {
    figures = await part({ quick, control });
  } catch (error) {
    figures = { error: (error as Error).stack ?? String(error) };
  }
  process.stdout.write(`${name}: ${JSON.stringify(figures, null, 2)}\n`);
  latest[name] = { run, figures };
}
await stopBenchServer();
// BENCH_RESULTS=none: a run inside an against comparison (bench/against.ts) leaves the file alone.
if (process.env.BENCH_RESULTS === 'none') process.stdout.write('bench/results/latest.json left as it was (BENCH_RESULTS=none)\n');
else {
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(latestUrl, `${JSON.stringify(latest, null, 2)}\n`);
  process.stdout.write('written to bench/results/latest.json\n');
}
