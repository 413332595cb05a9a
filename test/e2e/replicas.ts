import { DAY_MS, NO_FAULTS, startSimulator, type Simulator } from '../../sim/index.js';
import { createSqlClient } from '../../src/db/database.js';
import { cleanEnv, spawnCli, type CliChild } from './cli.js';
import { daemonEnv, waitFor } from './harness.js';
import { probeReplica, type ReplicaView } from './replica-probe.js';

/**
 * Replicas (`bnpl-recon start`, real processes) on one database against the simulator, polling
 * every second with long runs (about 1,000 orders in pages of 10 at 40 requests/s), so the poll
 * lock is held most of the time and there is a leader to kill; a reconciliation pass every 2 s
 * and after each poll. Used by test/e2e/replicas.test.ts and `npm run soak` (failover times).
 */
export interface Replica {
  cli: CliChild;
  url: string;
  metricsUrl: string;
  alive: boolean;
}

export interface ReplicaSet {
  sim: Simulator;
  replicas: Replica[];
  /** What every live replica says now (undefined for a dead one). */
  probe(): Promise<(ReplicaView | undefined)[]>;
  /** SIGKILLs the poll leader and returns the ms until another replica leads the poll; then restarts the killed one. */
  killLeader(): Promise<number>;
  /**
   * SIGKILLs the reconcile leader in the middle of a pass and waits until another replica has closed
   * that pass's run; returns the run's id and the ms from the kill to its closing (the next leader
   * closes it right after taking the lock, jobs/singleton.ts); then restarts the killed one.
   */
  killReconcileLeader(): Promise<{ runId: number; takeoverMs: number }>;
  stop(): Promise<void>;
}

async function spawnReplica(env: NodeJS.ProcessEnv): Promise<Replica> {
  const cli = spawnCli(['start'], env);
  const running = await cli.waitForLog('bnpl-recon running', 60_000);
  return { cli, url: String(running.url), metricsUrl: String(running.metrics), alive: true };
}

export async function startReplicas(databaseUrl: string, count = 3): Promise<ReplicaSet> {
  const sim = await startSimulator({ seed: 'replicas', faults: NO_FAULTS, business: { ordersPerDay: 250 } });
  await sim.advance(4 * DAY_MS);
  const env = cleanEnv(daemonEnv({
    sim,
    databaseUrl,
    graceSeconds: 3600,
    extra: { LOG_LEVEL: 'info', POLL_SCHEDULE: '* * * * * *', RECONCILE_SCHEDULE: '*/2 * * * * *', POLL_PAGE_SIZE: '10', RATE_LIMIT_RPS: '40', POLL_LOCK_HEARTBEAT_MS: '500', DB_POOL_MAX: '4' },
  }));
  const replicas: Replica[] = [];
  // Read-only look at the run records, to kill a leader while its run is going.
  const ledger = createSqlClient(databaseUrl, { poolMax: 1 });
  const stop = async () => {
    for (const r of replicas) r.cli.kill();
    await Promise.all(replicas.map((r) => r.cli.exited));
    await ledger.end({ timeout: 5 });
    await sim.stop();
  };
  try {
    for (let i = 0; i < count; i += 1) replicas.push(await spawnReplica(env));
  } catch (error) {
    await stop();
    throw error;
  }
  const probe = () => Promise.all(replicas.map((r) => (r.alive ? probeReplica(r.url, r.metricsUrl) : Promise.resolve(undefined))));
  /**
   * Stops the job's leader (SIGSTOP) in the middle of a run that started after `sinceMs`, and
   * returns which replica it is and the run, still stopped, for the caller to kill. Runs here may
   * last under a second, about as long as a look over HTTP and SQL: a run that ended between the
   * look and a kill would leave nothing for the next leader to close. So the leader is stopped
   * before the ledger is read, and kept stopped only if a run is `running` at two reads with no
   * other live replica claiming the job's lock in between: its gauge is set before the run starts
   * and cleared after it ends (jobs/singleton.ts), so the run is the stopped replica's. Otherwise it
   * is resumed and looked at again. A run left by a replica killed earlier started before `sinceMs`.
   */
  const stopLeaderMidRun = async (job: 'poll' | 'reconcile', sinceMs: number, everyMs: number): Promise<{ at: number; runId: number }> => {
    const runs = job === 'poll' ? 'poll_runs' : 'reconcile_runs';
    return waitFor(`a ${job} leader stopped in the middle of a run`, async () => {
      const at = (await probe()).findIndex((v) => v?.[job] === true);
      if (at < 0) return undefined;
      const suspect = replicas[at]!;
      process.kill(suspect.cli.pid, 'SIGSTOP');
      let caught: { at: number; runId: number } | undefined;
      try {
        const [run] = await ledger<{ id: string }[]>`
          select id::text as id from ${ledger(runs)}
          where status = 'running' and started_at > to_timestamp(${sinceMs / 1000}) order by id desc limit 1`;
        if (run) {
          const others = await Promise.all(replicas.map((r, i) => (i === at || !r.alive ? Promise.resolve(null) : probeReplica(r.url, r.metricsUrl))));
          const [again] = await ledger<{ status: string }[]>`select status from ${ledger(runs)} where id = ${run.id}`;
          if (!others.some((v) => v === undefined || v?.[job] === true) && again?.status === 'running') caught = { at, runId: Number(run.id) };
        }
      } finally {
        if (!caught) process.kill(suspect.cli.pid, 'SIGCONT');
      }
      return caught;
    }, 30_000, everyMs);
  };
  const now = async (): Promise<number> => (await ledger<{ ms: number }[]>`select extract(epoch from now())::float8 * 1000 as ms`)[0]!.ms;
  return {
    sim,
    replicas,
    probe,
    async killLeader() {
      const { at } = await stopLeaderMidRun('poll', await now(), 20);
      const victim = replicas[at]!;
      victim.alive = false;
      const killedAt = performance.now();
      victim.cli.kill();
      await victim.cli.exited;
      const ms = await waitFor('another poll leader', async () => ((await probe()).some((v) => v?.poll === true) ? performance.now() - killedAt : undefined), 20_000, 20);
      replicas[at] = await spawnReplica(env);
      return ms;
    },
    async killReconcileLeader() {
      // Passes here take 60-280 ms (finished_at - started_at in reconcile_runs).
      const caught = await stopLeaderMidRun('reconcile', await now(), 10);
      const victim = replicas[caught.at]!;
      victim.alive = false;
      const killedAt = Date.now();
      victim.cli.kill();
      await victim.cli.exited;
      // The next leader closes the run with now() as finished_at: the ledger says when it took over,
      // where scrapes every 100 ms see a reconcile leader in under a tenth of them.
      const closedAt = await waitFor('the killed pass closed by another replica', async () => {
        const [run] = await ledger<{ status: string; ms: number | null }[]>`
          select status, extract(epoch from finished_at)::float8 * 1000 as ms from reconcile_runs where id = ${caught.runId}`;
        return run && run.status !== 'running' ? (run.ms ?? undefined) : undefined;
      }, 20_000, 20);
      replicas[caught.at] = await spawnReplica(env);
      return { runId: caught.runId, takeoverMs: closedAt - killedAt };
    },
    stop,
  };
}
