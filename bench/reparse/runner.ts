/**
 * Child process for bench/reparse/index.ts: one `ledger reparse` run (runReparse, as the command and the
 * daemon's job call it) over the seeded ledger, in a process of its own so the peak RSS reported is
 * the reparse's alone. Settings: DATABASE_URL, BATCH_SIZE (default: the command's), DUTY (default:
 * the daemon's automatic run's, REPARSE_DUTY).
 */
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { silentLogger } from '../../src/log/logger.js';
import { REPARSE_DUTY } from '../../src/reparse/job.js';
import { runReparse } from '../../src/reparse/run.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { createRegistry } from '../../src/metrics/registry.js';

const sql = createSqlClient(process.env.DATABASE_URL as string, { poolMax: 2 });
const database = databaseOver(sql);

const startRss = process.memoryUsage().rss;
let peakRss = startRss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);
const started = performance.now();
const summary = await runReparse(
  { database, log: silentLogger(), metrics: createMetrics(createRegistry({ defaultMetrics: false }), database, 'sandbox') },
  { environment: 'sandbox', status: 'unparsed', dryRun: false, trigger: 'automatic', duty: Number(process.env.DUTY ?? REPARSE_DUTY), ...(process.env.BATCH_SIZE ? { batchSize: Number(process.env.BATCH_SIZE) } : {}) },
);
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
await database.close();
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
process.send?.({
  duty: Number(process.env.DUTY ?? REPARSE_DUTY),
  examined: summary.examined,
  outcomes: summary.outcomes,
  seconds: Math.round(seconds * 100) / 100,
  deliveriesPerSecond: Math.round(summary.examined / seconds),
  startRssMib: mib(startRss),
  peakRssMib: mib(peakRss),
});
