import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { silentLogger } from '../../src/log/logger.js';
import { runReparse } from '../../src/reparse/run.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceDelivery } from '../helpers/deliveries.js';
import { testMetrics } from '../helpers/metrics.js';
import { waitFor } from '../helpers/wait.js';

/**
 * docs/how-it-decides.md: "One reparse per environment at a time (an advisory lock)", and "a
 * delivery applied at receipt stays the applied one". Reparse's heartbeat notices a lost lock only
 * up to 10 s later, so each batch checks the lock in its own transaction (reparse/run.ts
 * fencedRederive): a run whose lock session ended (killed, an idle timeout, a dropped connection)
 * writes nothing beside the new holder.
 */
let db: TestDatabase;
useTestDatabase('reparse_fencing', (d) => (db = d));
const extra: Database[] = [];
afterAll(async () => {
  for (const d of extra) await d.close();
});

const reparse = (database: Database) =>
  runReparse({ database, log: silentLogger(), ...testMetrics(database) }, { environment: 'sandbox', status: 'all', dryRun: false, trigger: 'command' });

it('a reparse run that lost its lock while its batch waited writes nothing beside the next holder: it stops as aborted and the applied delivery stays applied', { timeout: 60_000 }, async () => {
  const [x] = await writeDeliveries(db.sql, [invoiceDelivery(randomUUID(), '2031-01-10T00:00:00Z')]);
  expect(x!.applied).toBe(true);
  const replicaA = databaseOver(createSqlClient(db.url, { poolMax: 2 }));
  const replicaB = databaseOver(createSqlClient(db.url, { poolMax: 2 }));
  const blocker = createSqlClient(db.url, { poolMax: 1 });
  extra.push(replicaA, replicaB);
  try {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    // Something holds the event's claim row for a moment (any slow transaction touching it).
    const blocking = blocker.begin(async (tx) => {
      await tx`select 1 from webhook_applied_events for update`;
      locked();
      await held;
    });
    await isLocked;
    const waiting = async (n: number) =>
      waitFor(`${n} reparse statement(s) waiting`, async () => {
        const rows = await db.sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%delete from webhook_applied_events%'`;
        return rows.length >= n ? true : undefined;
      }, 10_000, 20);
    const a = reparse(replicaA).then((s) => (s.aborted ? 'aborted' : 'complete'), (e: unknown) => String(e));
    await waiting(1);
    // Replica A's lock session ends; A's run goes on.
    await db.sql.unsafe(`select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and granted
      and database = (select oid from pg_database where datname = current_database())
      and ((classid::bigint << 32) | objid::bigint) = ${lockKey('reparse', 'sandbox').toString()} and objsubid = 1`);
    // pg_terminate_backend only signals: until that backend has exited, its advisory lock is still
    // held, and B's run would find another replica reparsing and skip (a CI run timed out so).
    await waitFor('the terminated session\'s lock released', async () => {
      const rows = await db.sql.unsafe(`select 1 from pg_locks where locktype = 'advisory' and granted
        and database = (select oid from pg_database where datname = current_database())
        and ((classid::bigint << 32) | objid::bigint) = ${lockKey('reparse', 'sandbox').toString()} and objsubid = 1`);
      return rows.length === 0 ? true : undefined;
    }, 10_000, 20);
    const b = reparse(replicaB).then((s) => (s.skipped ? 'skipped' : s.aborted ? 'aborted' : 'complete'), (e: unknown) => String(e));
    await waiting(2);
    release();
    await blocking;
    expect({ a: await a, b: await b }).toEqual({ a: 'aborted', b: 'complete' });
    const [row] = await db.sql<{ applied: boolean; claimed_by: string | null }[]>`
      select d.applied, (select a.delivery_id::text from webhook_applied_events a where a.event_key = d.event_key) as claimed_by
      from webhook_deliveries d where d.id = ${x!.deliveryId}`;
    expect(row).toEqual({ applied: true, claimed_by: String(x!.deliveryId) });
    const runs = await db.sql<{ status: string }[]>`select status::text as status from reparse_runs order by id`;
    expect(runs.map((r) => r.status).sort()).toEqual(['aborted', 'complete']);
  } finally {
    await blocker.end({ timeout: 5 });
  }
});
