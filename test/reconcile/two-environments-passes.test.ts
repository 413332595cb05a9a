import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import type { Database } from '../../src/db/database.js';
import { parseEventTime } from '../../src/webhooks/event-time.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { T0, at, pass, pollRun, snapshot, type Env } from './fixtures.js';

/**
 * "one daemon serves one environment, and two daemons may share one database" (CONTRACT.md), and
 * the reconcile lock is per environment (jobs/lock-keys.ts) so that sandbox's pass never waits for
 * production's. A sandbox pass in progress must not hold up the production daemon's pass.
 */
let db: TestDatabase;
useTestDatabase('envs_pass_locks', (d) => (db = d), { poolMax: 8 });

const key = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex');

async function invoiceCreated(database: Database, env: Env, ref: string): Promise<void> {
  const uuid = randomUUID();
  const eventTime = at(10).toISOString();
  const et = parseEventTime(eventTime)!;
  await database.sql`
    insert into invoice_events (environment, event_key, topic, received_at, invoice_uuid, order_uuid, external_reference_id, event_time, event_time_sortable)
    values (${env}, ${key('invoice/created', uuid, et.sortable)}, 'invoice/created', ${eventTime}::timestamptz, ${uuid}, ${randomUUID()},
            ${ref}, ${eventTime}, ${et.sortable})`;
}

describe('reconciliation passes of the two environments on one ledger', () => {
  it("a production pass completes while a sandbox pass is still running (it does not wait for sandbox's commit)", async () => {
    // Both environments hold invoices, so each pass writes its kept invoice evidence (kept-set.ts).
    await invoiceCreated(db, 'sandbox', 'RE-SBX-1');
    await invoiceCreated(db, 'production', 'RE-PRD-1');
    // Sandbox: an order the API shows confirmed for hours with no webhook: a missed_webhook finding.
    const order = randomUUID();
    const run = await pollRun(db, T0, 'complete', 'sandbox');
    await snapshot(db, { env: 'sandbox', order, state: 'confirmed', seenAt: T0, runId: run });

    // Keep the sandbox pass busy at its upsert: another session is writing the same finding and has
    // not committed (as an operator's slow transaction, or any writer would); the pass waits there,
    // after its invoice evidence step.
    const holder = createSqlClient(db.url, { poolMax: 1 });
    const reserved = await holder.reserve();
    try {
      await reserved`begin`;
      await reserved`
        insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, details, evidence, evidence_hash, first_detected_at, last_checked_at)
        values ('sandbox', 'missed_webhook', 'open', 'order', ${order}, 'confirmed', 'held', '{}'::jsonb, 'x', now(), now())`;
      const now = new Date();
      const sandboxPass = pass(db, now, 'sandbox', { full: true });
      // Let the sandbox pass reach its upsert (it blocks on the uncommitted row).
      const deadline = Date.now() + 20_000;
      for (;;) {
        const [waiting] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query ilike '%insert into discrepancies%'`;
        if (waiting!.n > 0) break;
        if (Date.now() > deadline) throw new Error('the sandbox pass never reached its upsert');
        await new Promise((r) => setTimeout(r, 50));
      }

      // Production's daemon runs its own pass meanwhile: it has nothing to do with sandbox's rows.
      const started = Date.now();
      const production = pass(db, now, 'production', { full: true }).then(() => 'done' as const);
      const outcome = await Promise.race([production, new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 10_000))]);
      const [blocked] = await db.sql<{ q: string | null }[]>`
        select string_agg(left(regexp_replace(query, '\\s+', ' ', 'g'), 80), ' | ') as q from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`;
      await reserved`rollback`;
      await sandboxPass;
      await production;
      expect(outcome, `production pass after ${Date.now() - started} ms; sessions waiting on a lock: ${blocked?.q ?? 'none'}`).toBe('done');
    } finally {
      reserved.release();
      await holder.end({ timeout: 5 });
    }
  }, 60_000);
});
