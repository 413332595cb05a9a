import postgres from 'postgres';
import { cleanEnv, spawnCli, type CliChild } from './cli.js';
import { businessFigures, deliverOrdersTo, GRACE_SECONDS, settleBusiness, startBusinessSimulator, type BusinessFigures } from './failover-business.js';
import { startLoad, type LoadAnswer } from './fault-load.js';
import { daemonEnv, sleep, waitFor } from './harness.js';
import { startPgCluster } from './pg-cluster.js';
import { getText, metricValue } from './replica-probe.js';

/**
 * A Postgres failover under load, with real servers (pg-cluster.ts): a primary and a streaming
 * standby, two daemon replicas (`bnpl-recon start`) with both hosts in DATABASE_URL
 * (target_session_attrs=read-write) polling the simulator every second and reconciling every 2 s,
 * signed deliveries from concurrent senders that retry a 503 or a failed connection as the
 * provider does, and the simulator's own order webhooks (failover-business.ts). Then the
 * primary's whole process group is SIGKILLed (the machine is gone), and after `detectMs` (what
 * Patroni or CloudNativePG take to decide) the standby is promoted.
 *
 * `lagMs` holds back replication before the kill (SIGSTOP of the primary's walsender; stopping
 * the standby's walreceiver is not enough on loopback, where what was sent already waits in its
 * socket and is read after the kill), so the
 * window the replication mode decides about is there every time, not only when the kill happens
 * to fall into a commit: with synchronous replication a commit waits for the standby, so nothing
 * is acknowledged in that window; with asynchronous replication whatever was acknowledged in it
 * is on the dead primary only.
 *
 * The ledger is read on the promoted standby afterwards, and what became of the lost order
 * webhooks once the poller and the reconciliation have had their grace period there. Used by
 * test/e2e/failover.test.ts and `npm run soak`.
 */
export interface FailoverFigures {
  replication: 'synchronous' | 'asynchronous';
  acknowledged: number;
  /** acknowledged deliveries (by delivery_uuid) absent from the promoted standby */
  acknowledgedLost: number;
  appliedTwice: number;
  missingTypedRows: number;
  /** answers by status: 0 = no answer (connection refused or reset) */
  statuses: Record<number, number>;
  /** answers other than 2xx, 503 and no answer */
  unexpected: string[];
  /** 2xx answers between the kill and the promotion: the standby must acknowledge nothing */
  acksBeforePromotion: number;
  killToPromotionMs: number;
  /** from the promotion (pg_ctl promote started) to the first 2xx */
  promotionToFirstAckMs: number;
  /** from the promotion until both replicas answer /readyz 200 */
  promotionToReadyMs: number;
  /** what /metrics and /readyz said between the kill and the first 2xx */
  sawNotReady: boolean;
  sawDatabaseDown: boolean;
  /** bnpl_recon_webhook_deliveries_total{outcome="ledger_unavailable"} summed over both replicas at the end */
  ledgerUnavailable503: number;
  /** log lines 'webhook not stored: ledger unavailable' by cause, both replicas */
  causes: Record<string, number>;
  pollRunsAfterPromotion: number;
  reconcileRunsAfterPromotion: number;
  /** pairs of complete runs of the same job whose times overlap (a run recorded twice, or two leaders at once) */
  overlappingRuns: number;
  /** those pairs: job, ids and times */
  overlapping: string[];
  /** the simulator's order webhooks, and the findings the promoted ledger shows for the lost ones */
  business: BusinessFigures;
  daemonStderr: string;
}

export interface FailoverOptions {
  synchronous: boolean;
  lagMs?: number;
  detectMs?: number;
  loadBeforeMs?: number;
  loadAfterMs?: number;
  senders?: number;
}

interface Replica {
  cli: CliChild;
  url: string;
  metricsUrl: string;
}

async function spawnReplica(env: NodeJS.ProcessEnv): Promise<Replica> {
  const cli = spawnCli(['start'], env);
  const running = await cli.waitForLog('bnpl-recon running', 90_000);
  return { cli, url: String(running.url), metricsUrl: String(running.metrics) };
}

export async function runFailover(options: FailoverOptions): Promise<FailoverFigures> {
  const lagMs = options.lagMs ?? 1000;
  const detectMs = options.detectMs ?? 1000;
  const cluster = await startPgCluster({ synchronous: options.synchronous });
  const sim = await startBusinessSimulator();
  const replicas: Replica[] = [];
  let ledger: postgres.Sql | undefined;
  const views: { replica: number; at: number; ready: number; readyBody: string; up: number | undefined }[] = [];
  let watching = true;
  try {
    const admin = postgres(cluster.primary.url(), { max: 1, onnotice: () => {} });
    await admin`create database recon`;
    await admin.end();
    // Polls every second, so most order states are seen before the business moves them on.
    const env = cleanEnv(daemonEnv({
      sim,
      databaseUrl: cluster.multiHostUrl('recon'),
      graceSeconds: GRACE_SECONDS,
      extra: { LOG_LEVEL: 'info', POLL_SCHEDULE: '* * * * * *', RECONCILE_SCHEDULE: '*/2 * * * * *', POLL_LOCK_HEARTBEAT_MS: '500', DB_POOL_MAX: '4' },
    }));
    replicas.push(...(await Promise.all([spawnReplica(env), spawnReplica(env)])));
    deliverOrdersTo(sim, replicas.map((r) => `${r.url}/webhooks`));
    // Both polled once on the primary before the load, so "again after the promotion" means something.
    const primarySql = postgres(cluster.primary.url('recon'), { max: 1, onnotice: () => {} });
    await waitFor('a complete poll and pass on the primary', async () => {
      const [row] = await primarySql<{ polls: number; passes: number }[]>`
        select (select count(*)::int from poll_runs where status = 'complete') as polls,
               (select count(*)::int from reconcile_runs where status = 'complete') as passes`;
      return row && row.polls > 0 && row.passes > 0 ? true : undefined;
    }, 60_000, 100);
    await primarySql.end();

    const answers: LoadAnswer[] = [];
    const load = startLoad(replicas.map((r) => `${r.url}/webhooks`), sim.secrets.sandbox, {
      senders: options.senders ?? 8,
      header: sim.signatureHeader,
      onAnswer: (a) => answers.push(a),
    });
    // What the replicas say while it happens: readiness and database_up, each replica probed on its
    // own about every 50 ms. A probe counts from when it was sent: one sent during the 1-3 s outage
    // can answer (after its 2 s database check times out) once the first 2xx has come, and what it
    // says is still the outage's. Sampled every 200 ms, both replicas in turn and timed by their
    // answers, a run saw neither signal (CI, Node 20).
    const watcher = Promise.all(replicas.map(async (r, replica) => {
      while (watching) {
        const at = performance.now();
        const [ready, metrics] = await Promise.all([
          getText(`${r.url}/readyz`, 3000).catch(() => ({ status: 0, text: '' })),
          getText(r.metricsUrl, 3000).catch(() => ({ status: 0, text: '' })),
        ]);
        views.push({ replica, at, ready: ready.status, readyBody: ready.text, up: metricValue(metrics.text, 'bnpl_recon_database_up') });
        await sleep(50);
      }
    }));

    await sleep(options.loadBeforeMs ?? 2000);
    const sender = await cluster.primary.walSenderPid();
    if (sender === undefined) throw new Error('the primary has no walsender');
    if (lagMs > 0) {
      process.kill(sender, 'SIGSTOP');
      await sleep(lagMs);
    }
    await cluster.primary.kill();
    const killedAt = performance.now();
    await sleep(detectMs);
    // "The promotion" is when it is asked for: the standby may accept writes before pg_ctl returns.
    const promotedAt = performance.now();
    await cluster.standby.promote();
    const promotedAtEpochMs = Date.now();
    const firstAck = await waitFor('the first 2xx after the promotion', () => answers.find((a) => a.at > promotedAt && a.status === 200)?.at, 60_000, 20);
    const readyAt = await waitFor('both replicas ready', () => {
      const last = replicas.map((_, i) => views.filter((v) => v.replica === i).at(-1));
      return last.every((v) => v && v.at > firstAck && v.ready === 200) ? performance.now() : undefined;
    }, 60_000, 100);
    await sleep(options.loadAfterMs ?? 2000);
    const report = await load.settle(45_000);
    ledger = postgres(cluster.standby.url('recon'), { max: 1, onnotice: () => {} });
    const sql = ledger;
    // A poll and a pass that started after the promotion, on the promoted standby.
    await waitFor('a poll and a pass after the promotion', async () => {
      const [row] = await sql<{ polls: number; passes: number }[]>`
        select (select count(*)::int from poll_runs where status = 'complete' and started_at > to_timestamp(${promotedAtEpochMs / 1000})) as polls,
               (select count(*)::int from reconcile_runs where status = 'complete' and started_at > to_timestamp(${promotedAtEpochMs / 1000})) as passes`;
      return row && row.polls > 0 && row.passes > 0 ? row : undefined;
    }, 60_000, 200);
    watching = false;
    await watcher;
    await settleBusiness(sim, sql);
    const business = await businessFigures(sim, sql);
    const [runs] = await sql<{ polls: number; passes: number }[]>`
      select (select count(*)::int from poll_runs where status = 'complete' and started_at > to_timestamp(${promotedAtEpochMs / 1000})) as polls,
             (select count(*)::int from reconcile_runs where status = 'complete' and started_at > to_timestamp(${promotedAtEpochMs / 1000})) as passes`;
    // Each pair spelled out, so a failure says which job, which runs and when.
    const overlapping = await sql<{ pair: string }[]>`
      select format('%s %s [%s, %s] and %s [%s, %s]', t.job, t.a, t.a_start, t.a_end, t.b, t.b_start, t.b_end) as pair
      from (
        select 'poll_runs' as job, a.id as a, a.started_at as a_start, a.finished_at as a_end, b.id as b, b.started_at as b_start, b.finished_at as b_end
        from poll_runs a join poll_runs b on a.id < b.id and a.environment = b.environment
        where a.status = 'complete' and b.status = 'complete' and tstzrange(a.started_at, a.finished_at) && tstzrange(b.started_at, b.finished_at)
        union all
        select 'reconcile_runs', a.id, a.started_at, a.finished_at, b.id, b.started_at, b.finished_at
        from reconcile_runs a join reconcile_runs b on a.id < b.id and a.environment = b.environment
        where a.status = 'complete' and b.status = 'complete' and tstzrange(a.started_at, a.finished_at) && tstzrange(b.started_at, b.finished_at)
      ) t`;
    const [lost] = await sql<{ n: number }[]>`
      select count(*)::int as n from unnest(${report.ackedUuids}::uuid[]) as a(u)
      where not exists (select 1 from webhook_deliveries d where d.delivery_uuid = a.u)`;
    const [twice] = await sql<{ n: number }[]>`
      select count(*)::int as n from (select 1 from webhook_deliveries where applied group by environment, event_key having count(*) > 1) t`;
    const [untyped] = await sql<{ n: number }[]>`
      select count(*)::int as n from webhook_deliveries d
      where d.applied and d.parse_status = 'parsed'
        and not exists (select 1 from order_events e where e.environment = d.environment and e.event_key = d.event_key)`;
    let ledgerUnavailable503 = 0;
    for (const r of replicas) {
      const text = (await getText(r.metricsUrl)).text;
      const m = /^bnpl_recon_webhook_deliveries_total\{[^}]*outcome="ledger_unavailable"[^}]*\} (\d+)/m.exec(text);
      ledgerUnavailable503 += m ? Number(m[1]) : 0;
    }
    const causes: Record<string, number> = {};
    for (const r of replicas) {
      for (const line of r.cli.logs()) {
        if (line.msg === 'webhook not stored: ledger unavailable') causes[String(line.cause)] = (causes[String(line.cause)] ?? 0) + 1;
      }
    }
    const during = views.filter((v) => v.at > killedAt && v.at < firstAck);
    return {
      replication: options.synchronous ? 'synchronous' : 'asynchronous',
      acknowledged: report.ackedUuids.length,
      acknowledgedLost: lost?.n ?? -1,
      appliedTwice: twice?.n ?? -1,
      missingTypedRows: untyped?.n ?? -1,
      statuses: answers.reduce<Record<number, number>>((all, a) => ({ ...all, [a.status]: (all[a.status] ?? 0) + 1 }), {}),
      unexpected: report.unexpected,
      acksBeforePromotion: answers.filter((a) => a.at > killedAt && a.at < promotedAt && a.status === 200).length,
      killToPromotionMs: Math.round(promotedAt - killedAt),
      promotionToFirstAckMs: Math.round(firstAck - promotedAt),
      promotionToReadyMs: Math.round(readyAt - promotedAt),
      sawNotReady: during.some((v) => v.ready !== 200),
      sawDatabaseDown: during.some((v) => v.up === 0),
      ledgerUnavailable503,
      causes,
      pollRunsAfterPromotion: runs?.polls ?? 0,
      reconcileRunsAfterPromotion: runs?.passes ?? 0,
      overlappingRuns: overlapping.length,
      overlapping: overlapping.map((row) => row.pair),
      business,
      daemonStderr: replicas.map((r) => r.cli.stderr()).join(''),
    };
  } catch (error) {
    // What the replicas said last, for the failure's reader: their last log lines, then (last, so
    // an output cut from the top still shows it) what each answered /readyz last, whether it
    // exited, and how often it logged each warning and error.
    const tail = replicas.map((r, i) => `replica ${i}:\n${r.cli.stdout().trim().split('\n').slice(-15).join('\n')}\n${r.cli.stderr().slice(-1000)}`).join('\n');
    const summary = replicas.map((r, i) => {
      const last = views.filter((v) => v.replica === i).at(-1);
      const readiness = last ? `last /readyz ${last.ready} ${last.readyBody}` : 'no /readyz answer recorded';
      const exit = r.cli.child.exitCode ?? r.cli.child.signalCode;
      const warnings: Record<string, number> = {};
      for (const line of r.cli.logs()) {
        if (Number(line.level) >= 40) warnings[String(line.msg)] = (warnings[String(line.msg)] ?? 0) + 1;
      }
      return `replica ${i}: ${exit === null ? 'running' : `exited (${exit})`}; ${readiness}; warnings and errors logged: ${JSON.stringify(warnings)}`;
    }).join('\n');
    const tailAndSummary = `${tail}\n${summary}`;
    throw new Error(`${(error as Error).message}\n${tailAndSummary}`, { cause: error });
  } finally {
    watching = false;
    for (const r of replicas) r.cli.kill();
    await Promise.all(replicas.map((r) => r.cli.exited));
    await ledger?.end({ timeout: 2 });
    await sim.stop();
    await cluster.stop();
  }
}
