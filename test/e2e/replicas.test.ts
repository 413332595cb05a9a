import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { computeSignature } from '../../src/webhooks/signature.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { sleep, waitFor } from './harness.js';
import type { ReplicaView } from './replica-probe.js';
import { startReplicas, type ReplicaSet } from './replicas.js';

/**
 * Three replicas (`bnpl-recon start`, real processes) on one database against the simulator.
 * Deliveries spread over them, some sent to two at once, land once each; at most one replica leads
 * the poll and the reconciliation at any moment (their gauges and /readyz bodies, and the run
 * records in the ledger); SIGKILL of the poll leader in a run, and of the reconcile leader in a
 * pass, hands the job to another within 15 s, which records the cut-short run and runs it again.
 */
let db: TestDatabase;
useTestDatabase('replicas', (database) => (db = database));
let set: ReplicaSet;

beforeAll(async () => {
  set = await startReplicas(db.url, 3);
}, 180_000);

afterAll(async () => {
  await set?.stop();
});

async function post(url: string, body: string): Promise<{ status: number; id?: number }> {
  const r = await request(`${url}/webhooks`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', [set.sim.signatureHeader]: computeSignature(Buffer.from(body), set.sim.secrets.sandbox) },
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
        samples.push(await set.probe());
        await sleep(100);
      }
    })();
    const replicas = set.replicas;

    // Deliveries: spread over the replicas in turn, one in three also sent to a second one at the same moment.
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

    // SIGKILL the poll leader and time the takeover (the killed replica is started again after).
    const takeoverMs = await set.killLeader();
    // The same for the reconcile leader, in the middle of a pass.
    const reconcileKill = await set.killReconcileLeader();
    const sql = db.sql;
    const passAfter = await waitFor('a complete pass after the killed one', async () => {
      const [pass] = await sql<{ id: string }[]>`select min(id)::text as id from reconcile_runs where status = 'complete' and id > ${reconcileKill.runId}`;
      return pass?.id ?? undefined;
    }, 20_000, 50);
    // Let the replicas run a few more polls and passes, then stop watching (a pass holds its lock
    // for about a tenth of the time: 5 to 19 samples in 60 led the reconciliation in past runs).
    await sleep(8000);
    sampling = false;
    await sampler;
    console.info(`replicas: takeover after SIGKILL of the poll leader ${Math.round(takeoverMs)} ms, ${samples.length} samples, ${acked.length} acknowledged, test ${Math.round(performance.now() - started)} ms`);
    console.info(`replicas: takeover after SIGKILL of the reconcile leader in pass ${reconcileKill.runId} ${Math.round(reconcileKill.takeoverMs)} ms, complete pass ${passAfter} after it`);
    expect(takeoverMs).toBeLessThan(15_000);
    expect(reconcileKill.takeoverMs).toBeLessThan(15_000);

    // Leadership: never two replicas claiming the same job in two samples running (100 ms apart:
    // a scrape sees nothing shorter, and the ledger's run records below are exact); /readyz agrees.
    const led: Record<string, number> = {};
    for (const job of ['poll', 'reconcile'] as const) {
      const claims = samples.map((views) => views.flatMap((v, i) => (v?.[job] ? [i] : [])));
      const doubled = claims.filter((c, k) => c.length > 1 && (claims[k + 1]?.length ?? 0) > 1);
      expect(doubled, `${job}: samples with two leaders`).toEqual([]);
      led[job] = claims.filter((c) => c.length === 1).length;
      expect(led[job], `${job}: samples with a leader`).toBeGreaterThan(0);
    }
    console.info(`replicas: samples with a poll leader ${led.poll}, with a reconcile leader ${led.reconcile} of ${samples.length}`);
    const bodies = samples.flat().filter((v): v is ReplicaView => v !== undefined);
    expect(bodies.every((v) => typeof v.ready.leader?.poll === 'boolean' && typeof v.ready.leader.reconcile === 'boolean')).toBe(true);
    expect(bodies.some((v) => v.ready.leader?.poll === true)).toBe(true);
    expect(bodies.every((v) => v.readyStatus === 200)).toBe(true);

    // Spread and duplicated deliveries: every acknowledged one stored, one applied per event.
    const [missing] = await sql<{ n: number }[]>`select count(*)::int as n from unnest(${acked}::bigint[]) a(id) where not exists (select 1 from webhook_deliveries d where d.id = a.id)`;
    expect(missing?.n).toBe(0);
    const perEvent = await sql<{ deliveries: number; applied: number }[]>`
      select count(*)::int as deliveries, count(*) filter (where applied)::int as applied
      from webhook_deliveries where id = any(${acked}::bigint[]) group by event_key`;
    expect(perEvent.length).toBe(events);
    expect(perEvent.every((e) => e.applied === 1)).toBe(true);
    expect(perEvent.reduce((s, e) => s + e.deliveries, 0)).toBe(acked.length);
    expect(acked.length).toBe([...ackedPerEvent.values()].reduce((s, n) => s + n, 0));

    // The run records. A poll run's started_at is written under the lock: complete runs never
    // overlap. A pass's started_at is its clock, read before it asks for the lock (a pass that
    // waited for the previous one's release starts "before" that one ended), so for passes the
    // evidence is the order: runs numbered under the lock finish in that order.
    const [overlaps] = await sql<{ n: number }[]>`
      select count(*)::int as n from poll_runs a join poll_runs b on a.id < b.id
      where a.status = 'complete' and b.status = 'complete'
        and tstzrange(a.started_at, a.finished_at) && tstzrange(b.started_at, b.finished_at)`;
    expect(overlaps?.n, 'overlapping complete poll runs').toBe(0);
    const [outOfOrder] = await sql<{ n: number }[]>`
      select count(*)::int as n from (
        select finished_at < lag(finished_at) over (order by id) as earlier from reconcile_runs where status = 'complete') t
      where earlier`;
    expect(outOfOrder?.n, 'passes finished out of their lock order').toBe(0);
    const [pollRuns] = await sql<{ complete: number; aborted: number; running: number }[]>`
      select count(*) filter (where status = 'complete')::int as complete, count(*) filter (where status = 'aborted')::int as aborted,
             count(*) filter (where status = 'running')::int as running from poll_runs`;
    expect(pollRuns?.complete).toBeGreaterThan(0);
    expect(pollRuns?.aborted).toBeGreaterThanOrEqual(1);
    // ... and redone: a complete run after the last one a dead leader left.
    const [redone] = await sql<{ ok: boolean }[]>`
      select exists (select 1 from poll_runs where status = 'complete' and id > (select max(id) from poll_runs where status = 'aborted')) as ok`;
    expect(redone?.ok).toBe(true);

    // The killed pass: closed as failed by the next leader, not left running; redone (passAfter).
    const [killed] = await sql<{ status: string; error: string | null }[]>`select status, error from reconcile_runs where id = ${reconcileKill.runId}`;
    expect(killed?.status).toBe('failed');
    expect(killed?.error).toMatch(/process ended before the pass finished/);
    const [passes] = await sql<{ running: number }[]>`select count(*) filter (where status = 'running')::int as running from reconcile_runs where id < ${passAfter}`;
    expect(passes?.running, 'passes before the redone one still running').toBe(0);

    // No discrepancy twice, though the killed pass may have committed its duplicate deliveries
    // before dying (pass.ts, a transaction of their own) and the next pass found them again: one row
    // per identity, one creation entry in its history (from_status null), and each acknowledged
    // delivery that was not applied (the second copy of an event) recorded once.
    const doubled = await sql`
      select kind, entity_id, subject, count(*)::int as n from discrepancies
      group by environment, kind, entity_type, entity_id, subject having count(*) > 1`;
    expect(doubled).toEqual([]);
    const [history] = await sql<{ discrepancies: number; created: number; twice: number }[]>`
      select (select count(*)::int from discrepancies) as discrepancies,
             count(*)::int as created, count(*) filter (where n > 1)::int as twice
      from (select discrepancy_id, count(*) as n from discrepancy_history where from_status is null group by discrepancy_id) h`;
    expect(history?.twice).toBe(0);
    expect(history?.created).toBe(history?.discrepancies);
    const copies = await sql<{ id: string; recorded: number }[]>`
      select w.id::text as id, count(d.id)::int as recorded
      from webhook_deliveries w
      left join discrepancies d on d.kind = 'duplicate_delivery' and d.entity_type = 'webhook_delivery' and d.entity_id = w.id::text
      where w.id = any(${acked}::bigint[]) and not w.applied
      group by w.id`;
    expect(copies.length).toBe(acked.length - events);
    expect(copies.filter((c) => c.recorded !== 1)).toEqual([]);
  });
});
