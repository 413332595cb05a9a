// Run by inbox-size-limit.test.ts as the daemon runs: one process with a heap limit, the payout
// report inbox scanning RECON_DATA_DIR/payout-inbox once.
import { loadConfig } from '../../src/config/load.js';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startPayoutReportInbox } from '../../src/payout-import/inbox.js';

const [dataDir, url] = process.argv.slice(2) as [string, string];
const database = databaseOver(createSqlClient(url, { poolMax: 2, applicationName: 'payout inbox size test' }));
const config = loadConfig({ RECON_DATA_DIR: dataDir, PROVIDER_ENV: 'sandbox', DATABASE_URL: url });
const shutdown = new Shutdown(silentLogger(), 5000);
const inbox = startPayoutReportInbox({ config, log: silentLogger(), database, shutdown }, { intervalMs: 3_600_000, settleMs: 0 });
const result = await inbox.runNow();
process.stdout.write(`${JSON.stringify({ imported: result.imported.length, failed: result.failed })}\n`);
await inbox.stop();
await database.close();
process.exit(0);
