import { beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../../src/jobs/runs.js';
import { retryingInsertRaces, upsertOrdersPages } from '../../src/poller/upsert.js';
import { transaction } from '../../src/db/transaction.js';
import type { Sql } from 'postgres';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { orderUuid } from '../provider/fake-provider.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('poller_upsert');
});

const order = (id: number, state = 'confirmed') => ({ uuid: orderUuid(id), state, external_reference_id: `r${id}` });

describe('upsertOrdersPages', () => {
  it('writes several pages in one statement, each row stamped with its own page time', async () => {
    const runId = await startRun(database.sql, 'poll_runs', 'sandbox', { holder: 'test' });
    const t1 = new Date('2026-01-01T00:00:01.000Z');
    const t2 = new Date('2026-01-01T00:00:02.000Z');
    const written = await upsertOrdersPages(database.sql, 'sandbox', runId, [
      { orders: [order(1), order(2), order(1, 'pending')], observedAt: t1 },
      { orders: [order(3, 'shipped')], observedAt: t2 },
    ]);
    expect(written).toEqual({ newInRun: 3, newInRunByPage: [2, 1], observations: 3 });
    const rows = await database.sql<{ order_uuid: string; state: string; last_seen_ms: number }[]>`
      select order_uuid, state, (extract(epoch from last_seen_at) * 1000)::float8 as last_seen_ms from order_snapshots where environment = 'sandbox' order by order_uuid`;
    // A repeated order within a page counts once: its first occurrence.
    expect(rows.map((r) => [r.order_uuid, r.state, r.last_seen_ms])).toEqual([
      [orderUuid(1), 'confirmed', t1.getTime()],
      [orderUuid(2), 'confirmed', t1.getTime()],
      [orderUuid(3), 'shipped', t2.getTime()],
    ]);
    const obs = await database.sql<{ order_uuid: string; observed_ms: number }[]>`
      select order_uuid, (extract(epoch from observed_at) * 1000)::float8 as observed_ms from order_state_observations where poll_run_id = ${runId} order by order_uuid`;
    expect(obs.map((o) => o.observed_ms)).toEqual([t1.getTime(), t1.getTime(), t2.getTime()]);
    // The same pages again: nothing new to the run, no new observation; an older read changes nothing.
    expect(await upsertOrdersPages(database.sql, 'sandbox', runId, [{ observedAt: new Date('2026-01-01T00:00:00.000Z'), orders: [order(3, 'complete')] }])).toEqual({ newInRun: 0, newInRunByPage: [0], observations: 0 });
    expect(await upsertOrdersPages(database.sql, 'sandbox', runId, [])).toEqual({ newInRun: 0, newInRunByPage: [], observations: 0 });
  });
  it('merges concurrent batches that share new orders: each order once, counted once, every change observed', async () => {
    const runId = await startRun(database.sql, 'poll_runs', 'sandbox', { holder: 'test' });
    const ids = Array.from({ length: 200 }, (_, i) => 10_000 + i);
    const t = (ms: number) => new Date(Date.UTC(2026, 0, 2, 0, 0, 0, ms));
    // Eight statements at once over the same 200 new orders: the later ones lose the insert race
    // and must merge as updates (retried), not fail or insert twice.
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, k) =>
        upsertOrdersPages(database.sql, 'sandbox', runId, [{ orders: ids.map((id) => order(id, k % 2 === 0 ? 'pending' : 'confirmed')), observedAt: t(k) }]),
      ),
    );
    expect(results.reduce((n, r) => n + r.newInRun, 0)).toBe(ids.length);
    const counts = await database.sql<{ snapshots: number; observations: number; changed: number }[]>`
      select (select count(*) from order_snapshots where order_uuid = any(${ids.map((id) => orderUuid(id))}::uuid[]))::int as snapshots,
             (select count(*) from order_state_observations where poll_run_id = ${runId})::int as observations,
             (select count(*) from order_state_observations where poll_run_id = ${runId} and previous_state is not null)::int as changed`;
    expect(counts[0]!.snapshots).toBe(ids.length);
    // Whatever order the statements ran in, each order was seen in at most both states: one first
    // sighting and, if the other state came later, one change (A, B, A keeps the first A).
    expect(results.reduce((n, r) => n + r.observations, 0)).toBe(counts[0]!.observations);
    expect(counts[0]!.observations - counts[0]!.changed).toBe(ids.length);
  });

  it('merges the same new orders written at once by transactions (the locked poll), each retried whole after a lost race', async () => {
    const runId = await startRun(database.sql, 'poll_runs', 'sandbox', { holder: 'test' });
    const ids = Array.from({ length: 200 }, (_, i) => 20_000 + i);
    const t = (ms: number) => new Date(Date.UTC(2026, 0, 3, 0, 0, 0, ms));
    let attempts = 0;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, k) =>
        retryingInsertRaces(() =>
          transaction(database.sql, async (tx) => {
            attempts += 1;
            await tx`select 1`; // the transaction's own work before the upsert (the poll checks its lock)
            return upsertOrdersPages(tx as unknown as Sql, 'sandbox', runId, [{ orders: ids.map((id) => order(id, 'pending')), observedAt: t(k) }], { retryRaces: false });
          }),
        ),
      ),
    );
    // Some transaction lost the race and ran again: the test met the case it is about.
    expect(attempts).toBeGreaterThan(8);
    expect(results.reduce((n, r) => n + r.newInRun, 0)).toBe(ids.length);
    const [row] = await database.sql<{ snapshots: number }[]>`
      select count(*)::int as snapshots from order_snapshots where order_uuid = any(${ids.map((id) => orderUuid(id))}::uuid[])`;
    expect(row!.snapshots).toBe(ids.length);
  });
});

