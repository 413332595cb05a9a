/**
 * `npm run bench [-- --quick] [-- --only=ingest,ingest-against,poll,reconcile,statements,reparse,growth,import-ingest] [-- --deliveries N] [-- --reparse-control] [-- --against=REV] [-- --rounds=N]`: runs each benchmark, which measures
 * its baseline in the same run and reports the ratio, prints the figures and writes them to
 * bench/results/latest.json (earlier figures are in its git history).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { runGrowthBench } from './growth/index.js';
import { runIngestAgainstBench } from './ingest/against.js';
import { runIngestBench } from './ingest/index.js';
import { runPollBench } from './poll/index.js';
import { runReconcileBench } from './reconcile/index.js';
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
// ingest-against: the git revision whose receiver this checkout's is measured against.
const against = process.argv.find((a) => a.startsWith('--against='))?.slice('--against='.length);
// ingest-against: rounds (default 7, quick 3); odd, so that the median is one round's.
const roundsArg = process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length);
const rounds = roundsArg === undefined ? undefined : Number(roundsArg);
if (rounds !== undefined && !(Number.isInteger(rounds) && rounds > 0)) throw new Error('--rounds wants a positive integer');
const parts: Record<string, (o: { quick?: boolean; control?: boolean }) => Promise<Record<string, unknown>>> = {
  ingest: runIngestBench,
  'ingest-against': (o) => runIngestAgainstBench({ ...o, against, rounds }),
  poll: runPollBench,
  reconcile: runReconcileBench,
  statements: runStatementsBench,
  reparse: runReparseBench,
  growth: (o) => runGrowthBench({ ...o, deliveries }),
  'import-ingest': runImportBesideIngestBench,
};
const selected = onlyArg ? onlyArg.split(',') : Object.keys(parts);

// latest.json keeps every part's latest figures, each with the run it came from, so a run of some
// parts (--only) replaces only theirs; earlier figures are in the file's git history.
const latestUrl = new URL('./results/latest.json', import.meta.url);
const latest = (existsSync(latestUrl) ? JSON.parse(readFileSync(latestUrl, 'utf8')) : {}) as Record<string, unknown>;
const run = {
  startedAt: new Date().toISOString(),
  quick,
  machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
};
for (const name of selected) {
  const part = parts[name];
  if (!part) throw new Error(`unknown benchmark ${name}; one of ${Object.keys(parts).join(', ')}`);
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
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(latestUrl, `${JSON.stringify(latest, null, 2)}\n`);
process.stdout.write('written to bench/results/latest.json\n');
