import { randomBytes } from 'node:crypto';
import { createSqlClient } from '../../src/db/database.js';
import { runFailover, type FailoverFigures } from '../../test/e2e/failover.js';
import { runKillTrials } from '../../test/e2e/kill-trials.js';
import { postgresServerBin } from '../../test/e2e/pg-cluster.js';
import { startReplicas } from '../../test/e2e/replicas.js';

/**
 * `npm run soak [-- --minutes N]`: SIGKILL trials of a daemon under load for N minutes (default 10)
 * on a fresh database of the Postgres server at SOAK_DATABASE_URL (else TEST_DATABASE_URL, else
 * DATABASE_URL), then FAILOVERS SIGKILLs of the poll leader and FAILOVERS of the reconcile leader
 * in the middle of a pass, among three replicas on the same database, then one JSON line: trials,
 * kills, acknowledged, lost (must be 0), applied twice (must be 0), the longest acknowledgement and
 * start, peak RSS, failover times (poll: ms from the kill to another replica leading the poll;
 * reconcile: to another replica closing the killed pass as failed). Exit status 1 if anything was
 * lost or applied twice, or a takeover took 15 s or more. The database is dropped when the run passed and kept otherwise.
 *
 * `npm run soak -- --postgres-failover [--trials N]`: instead, N (default 3) Postgres failovers
 * with synchronous replication and N with asynchronous replication, on private clusters of the
 * machine's Postgres (test/e2e/failover.ts), 10 s of load before and after each, with the
 * simulator's order webhooks (test/e2e/failover-business.ts); one JSON line per failover, then a
 * summary line. Exit status 1 if a synchronous failover lost an acknowledged delivery, applied one
 * twice, or took more than 15 s from the promotion to the first 2xx, or if any failover left a lost
 * order webhook unexplained, a missed_webhook finding without a lost webhook behind it, or two
 * complete runs of one job recorded as overlapping.
 */
async function postgresFailovers(trials: number): Promise<boolean> {
  if (!postgresServerBin()) {
    process.stderr.write('soak: no Postgres server binaries under /usr/lib/postgresql/*/bin (or PG_BIN): install postgresql\n');
    return false;
  }
  // The clusters' servers are detached and unreferenced, and the waits' timers too: this keeps the
  // process alive until the failovers are done.
  const alive = setInterval(() => undefined, 1000);
  const all: FailoverFigures[] = [];
  for (const synchronous of [true, false]) {
    for (let i = 0; i < trials; i += 1) {
      const f = await runFailover({ synchronous, loadBeforeMs: 10_000, loadAfterMs: 10_000 });
      all.push(f);
      process.stdout.write(`${JSON.stringify(f)}\n`);
    }
  }
  const sync = all.filter((f) => f.replication === 'synchronous');
  const async = all.filter((f) => f.replication === 'asynchronous');
  const summary = (fs: FailoverFigures[]) => ({
    failovers: fs.length,
    acknowledged: fs.reduce((n, f) => n + f.acknowledged, 0),
    acknowledgedLost: fs.map((f) => f.acknowledgedLost),
    appliedTwice: fs.reduce((n, f) => n + f.appliedTwice, 0),
    promotionToFirstAckMs: fs.map((f) => f.promotionToFirstAckMs),
    promotionToReadyMs: fs.map((f) => f.promotionToReadyMs),
    overlappingRuns: fs.reduce((n, f) => n + f.overlappingRuns, 0),
    overlapping: fs.flatMap((f) => f.overlapping),
    unexpected: fs.flatMap((f) => f.unexpected),
    orderWebhooksAcknowledged: fs.map((f) => f.business.acknowledged),
    orderWebhooksLost: fs.map((f) => f.business.acknowledgedLost),
    lostShownAsMissedWebhook: fs.map((f) => f.business.lostShownAsMissedWebhook),
    lostSuperseded: fs.map((f) => f.business.lostSuperseded.length),
    lostUnexplained: fs.reduce((n, f) => n + f.business.lostUnexplained.length, 0),
    falseMissedWebhooks: fs.reduce((n, f) => n + f.business.missedWebhookUnexplained.length, 0),
  });
  process.stdout.write(`${JSON.stringify({ synchronous: summary(sync), asynchronous: summary(async) })}\n`);
  clearInterval(alive);
  return (
    sync.every((f) => f.acknowledgedLost === 0 && f.appliedTwice === 0 && f.promotionToFirstAckMs <= 15_000 && f.unexpected.length === 0) &&
    all.every((f) => f.business.lostUnexplained.length === 0 && f.business.missedWebhookUnexplained.length === 0 && f.overlappingRuns === 0)
  );
}

if (process.argv.includes('--postgres-failover')) {
  const at = process.argv.indexOf('--trials');
  process.exitCode = (await postgresFailovers(at < 0 ? 3 : Number(process.argv[at + 1]))) ? 0 : 1;
  process.exit();
}
function minutesArg(argv: string[]): number {
  const at = argv.indexOf('--minutes');
  if (at < 0) return 10;
  const value = Number(argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--minutes wants a positive number, got '${argv[at + 1] ?? ''}'`);
  return value;
}

const minutes = minutesArg(process.argv.slice(2));
const FAILOVERS = 5;
const serverUrl = process.env.SOAK_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
if (!serverUrl) {
  process.stderr.write('soak: set SOAK_DATABASE_URL (or TEST_DATABASE_URL, DATABASE_URL) to a Postgres server where a database may be created\n');
  process.exit(2);
}
const name = `bnpl_soak_${randomBytes(4).toString('hex')}`;
const admin = createSqlClient(serverUrl, { poolMax: 1 });
await admin.unsafe(`create database "${name}"`);
const url = new URL(serverUrl);
url.pathname = `/${name}`;
const sql = createSqlClient(url.toString(), { poolMax: 2 });
let ok = false;
try {
  const report = await runKillTrials({
    databaseUrl: url.toString(),
    sql,
    untilMs: minutes * 60_000,
    onTrial: (t) => process.stderr.write(`trial ${t.trial}: acknowledged ${t.acknowledged}, start ${Math.round(t.startMs)} ms, longest ack ${Math.round(t.longestAckMs)} ms, RSS ${Math.round(t.peakRssMb)} MB\n`),
  });
  const set = await startReplicas(url.toString(), 3);
  const failoverMs: number[] = [];
  const reconcileFailoverMs: number[] = [];
  try {
    for (let i = 0; i < FAILOVERS; i += 1) {
      failoverMs.push(Math.round(await set.killLeader()));
      process.stderr.write(`failover ${i + 1}: another replica led the poll ${failoverMs.at(-1)} ms after SIGKILL of the leader\n`);
    }
    for (let i = 0; i < FAILOVERS; i += 1) {
      const killed = await set.killReconcileLeader();
      reconcileFailoverMs.push(Math.round(killed.takeoverMs));
      process.stderr.write(`reconcile failover ${i + 1}: pass ${killed.runId} closed as failed by another replica ${reconcileFailoverMs.at(-1)} ms after SIGKILL of its leader\n`);
    }
  } finally {
    await set.stop();
  }
  const longestFailoverMs = Math.max(...failoverMs, ...reconcileFailoverMs);
  process.stdout.write(
    `${JSON.stringify({ minutes, database: name, ...report, failovers: failoverMs.length, failoverMs, reconcileFailovers: reconcileFailoverMs.length, reconcileFailoverMs, longestFailoverMs })}\n`,
  );
  ok = report.lost === 0 && report.appliedTwice === 0 && report.missingTypedRows === 0 && longestFailoverMs < 15_000;
} finally {
  await sql.end({ timeout: 5 });
  if (ok) await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end({ timeout: 5 });
}
process.exitCode = ok ? 0 : 1;
