/**
 * Child process for bench/poll/index.ts: one poll in a process of its own, so peak RSS is the poller's
 * and nothing else's. Settings arrive as environment variables (what loadConfig reads);
 * BENCH_MODE=fetch-only walks the pages without writing them (the HTTP path alone).
 */
import { loadConfig } from '../../src/config/load.js';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { silentLogger } from '../../src/log/logger.js';
import { createProviderClient } from '../../src/provider/client.js';
import { scanOrders } from '../../src/poller/pager.js';
import { runPoll } from '../../src/poller/run.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { createRegistry } from '../../src/metrics/registry.js';

const config = loadConfig();
const log = silentLogger();
let peakRss = process.memoryUsage().rss;
const startRss = peakRss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);
const sql = createSqlClient(config.DATABASE_URL!, { poolMax: config.DB_POOL_MAX });
const database = databaseOver(sql);
const metrics = createMetrics(createRegistry({ defaultMetrics: false }), database, config.PROVIDER_ENV);
const client = createProviderClient(config, log, metrics.provider);
const started = performance.now();
const cpuAtStart = process.cpuUsage();
let result: Record<string, unknown>;
if (process.env.BENCH_MODE === 'fetch-only') {
  const scan = await scanOrders({
    fetchPage: (page, signal) => client.getOrdersPage(page, config.POLL_PAGE_SIZE, signal),
    onPage: async (orders) => orders.length,
    perPage: config.POLL_PAGE_SIZE,
    concurrency: config.POLL_CONCURRENCY,
    maxPages: config.POLL_MAX_PAGES,
    log,
  });
  result = { status: 'complete', pages: scan.pages, orders: scan.orders, requests: scan.stats.requests, throttled: scan.stats.throttled, retries: scan.stats.retries, probes: scan.probes, refetches: scan.refetches };
} else {
  const summary = await runPoll({ config, log, database, metrics }, client);
  result = { ...summary };
}
const elapsedMs = performance.now() - started;
const cpu = process.cpuUsage(cpuAtStart);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
await client.close();
await database.close();
process.send?.({ result: { ...result, elapsedMs, cpuS: (cpu.user + cpu.system) / 1e6, startRssMb: startRss / 2 ** 20, peakRssMb: peakRss / 2 ** 20 } });
