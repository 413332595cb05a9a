import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { DAY_MS, NO_FAULTS, startSimulator, type Simulator } from '../../src/sim/index.js';
import { computeSignature } from '../../src/webhooks/signature.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, spawnCli, type CliChild } from './cli.js';
import { daemonEnv, sleep, waitFor } from './harness.js';
import { probeReplica, type ReplicaView } from './replica-probe.js';

/**
 * Three replicas (`bnpl-recon start`, real processes) on one database against the simulator.
 * Deliveries spread over them, some sent to two at once, land once each; at most one replica leads
 * the poll and the reconciliation at any moment (their gauges and /readyz bodies, and the run
 * records in the ledger); SIGKILL of the poll leader hands the poll to another within 15 s.
 */
let db: TestDatabase;
useTestDatabase('replicas', (database) => (db = database));
let sim: Simulator;
const replicas: { cli: CliChild; url: string; metricsUrl: string; alive: boolean }[] = [];

beforeAll(async () => {
  sim = await startSimulator({ seed: 'replicas', faults: NO_FAULTS, business: { ordersPerDay: 250 } });
  await sim.advance(4 * DAY_MS);
  const env = cleanEnv(
    daemonEnv({
      sim,
      databaseUrl: db.url,
      graceSeconds: 3600,
      extra: {
        LOG_LEVEL: 'info',
        // A poll every second, each one long (about 1,000 orders in pages of 10 at 40 requests/s):
        // the poll lock is held most of the time, so there is a leader to kill.
        POLL_SCHEDULE: '* * * * * *',
        RECONCILE_SCHEDULE: '*/2 * * * * *',
        POLL_PAGE_SIZE: '10',
        RATE_LIMIT_RPS: '40',
        POLL_LOCK_HEARTBEAT_MS: '500',
        DB_POOL_MAX: '4',
      },
    }),
  );
  for (let i = 0; i < 3; i += 1) {
    const cli = spawnCli(['start'], env);
    replicas.push({ cli, url: '', metricsUrl: '', alive: true });
  }
  for (const r of replicas) {
    const running = await r.cli.waitForLog('bnpl-recon running', 60_000);
    r.url = String(running.url);
    r.metricsUrl = String(running.metrics);
  }
}, 120_000);

afterAll(async () => {
  for (const r of replicas) r.cli.kill();
  await Promise.all(replicas.map((r) => r.cli.exited));
  await sim?.stop();
});

async function post(url: string, body: string): Promise<{ status: number; id?: number }> {
  const r = await request(`${url}/webhooks`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', [sim.signatureHeader]: computeSignature(Buffer.from(body), sim.secrets.sandbox) },
  });
  const text = await r.body.text();
  return r.statusCode === 200 ? { status: 200, id: Number((JSON.parse(text) as { delivery_id: number }).delivery_id) } : { status: r.statusCode };
}

describe('three replicas on one database', () => {
  it('store spread and duplicated deliveries once each, lead one at a time, and take over after SIGKILL', { timeout: 150_000 }, async () => {
    const started = performance.now();
    const samples: (ReplicaView | undefined)[][] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push(await Promise.all(replicas.map((r) => (r.alive ? probeReplica(r.url, r.metricsUrl) : Promise.resolve(undefined)))));
        await sleep(100);
      }
    })();

    // Deliveries: each to a random replica, one in three also to another one at the same moment.
    const events = 300;
    const acked: number[] = [];
    const ackedPerEvent = new Map<number, number>();
    for (let batch = 0; batch < events; batch += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, k) => {
          const n = 5000 + batch + k;
          const body = JSON.stringify(samplePayload('order/confirmed', n));
          const first = n % 3;
          const targets = n % 3 === 0 ? [first, (first + 1) % 3] : [first];
          const results = await Promise.all(targets.map((t) => post(replicas[t]!.url, body)));
          for (const r of results) {
            expect(r.status).toBe(200);
            acked.push(r.id!);
            ackedPerEvent.set(n, (ackedPerEvent.get(n) ?? 0) + 1);
          }
        }),
      );
    }

    // A poll leader, then SIGKILL it and time the takeover.
    const leaderAt = await waitFor('a poll leader', () => {
      const last = samples.at(-1);
      const i = last?.findIndex((v) => v?.poll === true) ?? -1;
      return i >= 0 ? i : undefined;
    }, 30_000, 50);
    const victim = replicas[leaderAt]!;
    victim.alive = false;
    const killedAt = performance.now();
    victim.cli.kill();
    await victim.cli.exited;
    const takeoverMs = await waitFor('another poll leader', async () => {
      const views = await Promise.all(replicas.map((r) => (r.alive ? probeReplica(r.url, r.metricsUrl) : Promise.resolve(undefined))));
      return views.some((v) => v?.poll === true) ? performance.now() - killedAt : undefined;
    }, 20_000, 20);
    // Let the survivors run a few more polls and passes, then stop watching.
    await sleep(4000);
    sampling = false;
    await sampler;
    console.info(`replicas: takeover after SIGKILL of the poll leader ${Math.round(takeoverMs)} ms, ${samples.length} samples, ${acked.length} acknowledged, test ${Math.round(performance.now() - started)} ms`);
    expect(takeoverMs).toBeLessThan(15_000);

    // Leadership: never two replicas claiming the same job in two samples running (100 ms apart:
    // a scrape sees nothing shorter, and the ledger's run records below are exact); /readyz agrees.
    for (const job of ['poll', 'reconcile'] as const) {
      const claims = samples.map((views) => views.flatMap((v, i) => (v?.[job] ? [i] : [])));
      const doubled = claims.filter((c, k) => c.length > 1 && (claims[k + 1]?.length ?? 0) > 1);
      expect(doubled, `${job}: samples with two leaders`).toEqual([]);
      expect(claims.filter((c) => c.length === 1).length, `${job}: samples with a leader`).toBeGreaterThan(0);
    }
    const bodies = samples.flat().filter((v): v is ReplicaView => v !== undefined);
    expect(bodies.every((v) => typeof v.ready.leader?.poll === 'boolean' && typeof v.ready.leader.reconcile === 'boolean')).toBe(true);
    expect(bodies.some((v) => v.ready.leader?.poll === true)).toBe(true);
    expect(bodies.every((v) => v.readyStatus === 200)).toBe(true);

    // Spread and duplicated deliveries: every acknowledged one stored, one applied per event.
    const sql = db.sql;
    const [missing] = await sql<{ n: number }[]>`select count(*)::int as n from unnest(${acked}::bigint[]) a(id) where not exists (select 1 from webhook_deliveries d where d.id = a.id)`;
    expect(missing?.n).toBe(0);
    const perEvent = await sql<{ deliveries: number; applied: number }[]>`
      select count(*)::int as deliveries, count(*) filter (where applied)::int as applied
      from webhook_deliveries where id = any(${acked}::bigint[]) group by event_key`;
    expect(perEvent.length).toBe(events);
    expect(perEvent.every((e) => e.applied === 1)).toBe(true);
    expect(perEvent.reduce((s, e) => s + e.deliveries, 0)).toBe(acked.length);
    expect(acked.length).toBe([...ackedPerEvent.values()].reduce((s, n) => s + n, 0));

    // The run records: runs that finished never overlap; the killed leader's run is closed as aborted.
    for (const table of ['poll_runs', 'reconcile_runs'] as const) {
      const [overlaps] = await sql<{ n: number }[]>`
        select count(*)::int as n from ${sql(table)} a join ${sql(table)} b on a.id < b.id
        where a.status = 'complete' and b.status = 'complete'
          and tstzrange(a.started_at, a.finished_at) && tstzrange(b.started_at, b.finished_at)`;
      expect(overlaps?.n, `${table}: overlapping complete runs`).toBe(0);
    }
    const [pollRuns] = await sql<{ complete: number; aborted: number; running: number }[]>`
      select count(*) filter (where status = 'complete')::int as complete, count(*) filter (where status = 'aborted')::int as aborted,
             count(*) filter (where status = 'running')::int as running from poll_runs`;
    expect(pollRuns?.complete).toBeGreaterThan(0);
    expect(pollRuns?.aborted).toBeGreaterThanOrEqual(1);
  });
});
