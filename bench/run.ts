/**
 * `npm run bench [-- --quick] [-- --only ingest,poll,reconcile,statements,reparse,growth] [-- --deliveries N] [-- --reparse-control]`: runs each benchmark, which measures
 * its baseline in the same run and reports the ratio, prints the figures and writes them to
 * bench/results/latest.json (and a dated copy).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { runGrowthBench } from './growth.js';
import { runIngestBench } from './ingest.js';
import { runPollBench } from './poll.js';
import { runReconcileBench } from './reconcile.js';
import { runReparseBench } from './reparse.js';
import { runStatementsBench } from './statements.js';
import { stopBenchServer } from './support.js';

const quick = process.argv.includes('--quick');
const control = process.argv.includes('--reparse-control');
const onlyArg = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
// growth: the year's size (deliveries loaded into the ledger); default 20,000,000, quick 1,000,000.
const deliveriesArg = process.argv.find((a) => a.startsWith('--deliveries='))?.slice('--deliveries='.length)
  ?? process.argv[process.argv.indexOf('--deliveries') + 1];
const deliveries = process.argv.some((a) => a.startsWith('--deliveries')) ? Number(deliveriesArg) : undefined;
if (deliveries !== undefined && !(Number.isInteger(deliveries) && deliveries > 0)) throw new Error('--deliveries wants a positive integer');
const parts: Record<string, (o: { quick?: boolean; control?: boolean }) => Promise<Record<string, unknown>>> = {
  ingest: runIngestBench,
  poll: runPollBench,
  reconcile: runReconcileBench,
  statements: runStatementsBench,
  reparse: runReparseBench,
  growth: (o) => runGrowthBench({ ...o, deliveries }),
};
const selected = onlyArg ? onlyArg.split(',') : Object.keys(parts);

const results: Record<string, unknown> = {
  startedAt: new Date().toISOString(),
  quick,
  machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
};
for (const name of selected) {
  const run = parts[name];
  if (!run) throw new Error(`unknown benchmark ${name}; one of ${Object.keys(parts).join(', ')}`);
  process.stderr.write(`bench ${name}${quick ? ' (quick)' : ''}...\n`);
  try {
    results[name] = await run({ quick, control });
  } catch (error) {
    results[name] = { error: (error as Error).stack ?? String(error) };
  }
  process.stdout.write(`${name}: ${JSON.stringify(results[name], null, 2)}\n`);
}
await stopBenchServer();
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
const json = `${JSON.stringify(results, null, 2)}\n`;
await writeFile(new URL('./results/latest.json', import.meta.url), json);
await writeFile(new URL(`./results/${results.startedAt as string}.json`.replace(/:/g, '-'), import.meta.url), json);
process.stdout.write('written to bench/results/latest.json\n');
