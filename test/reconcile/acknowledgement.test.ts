import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { acknowledgeDiscrepancy } from '../../src/reconcile/ack.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Database } from '../../src/db/database.js';
import type { TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { GRACE, at, pollRun, snapshot } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('acknowledgement');

function passWith(database: Database, now: Date, graceSeconds: number, origin: 'daemon' | 'command') {
  return runReconcilePass(
    { config: { PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: graceSeconds }, log: silentLogger(), database, ...testMetrics(database, 'sandbox') },
    now,
    { origin },
  );
}

interface Row { id: number; status: string; ack_note: string | null; acknowledged_by: string | null }
const finding = async (db: TestDatabase, order: string) =>
  (await db.sql<Row[]>`select id::int as id, status::text as status, ack_note, acknowledged_by from discrepancies where entity_id = ${order}`)[0]!;
const history = async (db: TestDatabase, id: number) =>
  db.sql<{ from_status: string | null; to_status: string; actor: string; reason: string; evidence: Record<string, unknown> }[]>`
    select from_status::text, to_status::text, actor, reason, evidence from discrepancy_history where discrepancy_id = ${id} order by id`;

/** An order the poller saw confirmed at at(0) with no order/confirmed webhook: a missed webhook after the grace period. */
async function missedWebhookLedger(db: TestDatabase): Promise<string> {
  const order = randomUUID();
  const run = await pollRun(db, at(0));
  await snapshot(db, { order, state: 'confirmed', seenAt: at(0), runId: run });
  return order;
}

function reconcileCommand(db: TestDatabase, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'reconcile'],
      { cwd: new URL('../..', import.meta.url).pathname, env: { ...process.env, DATABASE_URL: db.url, PROVIDER_ENV: 'sandbox', LOG_LEVEL: 'warn', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('acknowledgements that stick', () => {
  it('survive a resolve and a reopen whose evidence has not changed, with true reasons and the note kept', withDb(async (db) => {
    const order = await missedWebhookLedger(db);
    await passWith(db, at(2 * GRACE), GRACE, 'daemon');
    const opened = await finding(db, order);
    expect(opened.status).toBe('open');
    const ack = await acknowledgeDiscrepancy(db, opened.id, 'provider confirmed by phone, webhook lost on their side', 'anna');
    expect(ack.outcome).toBe('acknowledged');

    // A pass with a grace period longer than the state's age cannot prove the finding: it resolves
    // it, and says why in terms that are true (the poller does still show the state).
    const longer = 10 * GRACE;
    const resolving = await passWith(db, at(2 * GRACE + 60), longer, 'command');
    expect(resolving.resolved).toBe(1);
    expect((await finding(db, order)).status).toBe('resolved');
    const resolvedRow = (await history(db, opened.id)).at(-1)!;
    expect(resolvedRow).toMatchObject({ from_status: 'acknowledged', to_status: 'resolved', actor: 'reconciler' });
    expect(resolvedRow.reason).toBe(`the poller first saw confirmed at ${at(0).toISOString().slice(0, 19)}Z, less than the grace period (${longer} s) before this pass`);
    expect(resolvedRow.reason).not.toContain('no longer shows');
    expect(resolvedRow.evidence).toMatchObject({ grace_seconds: longer, api_state: 'confirmed' });

    // The same evidence again: acknowledged again, not open; the note and who acknowledged stay.
    const reopening = await passWith(db, at(2 * GRACE + 120), GRACE, 'daemon');
    expect(reopening.reopened).toBe(1);
    const back = await finding(db, order);
    expect(back).toMatchObject({ status: 'acknowledged', ack_note: 'provider confirmed by phone, webhook lost on their side', acknowledged_by: 'operator:anna' });
    const last = (await history(db, opened.id)).at(-1)!;
    expect(last).toMatchObject({ from_status: 'resolved', to_status: 'acknowledged', actor: 'reconciler' });
    expect(last.reason).toContain('unchanged since it was acknowledged');

    // Evidence that changed (the poller saw the state anew) reopens it as open, for a person to look at again.
    // Seen anew a grace period before the pass: a poll's time, within the incremental pass's lookback.
    await db.sql`update order_snapshots set state_since = ${at(GRACE + 180).toISOString()}::timestamptz where order_uuid = ${order}`;
    await db.sql`update order_state_observations set observed_at = ${at(GRACE + 180).toISOString()}::timestamptz where order_uuid = ${order}`;
    await passWith(db, at(2 * GRACE + 180), GRACE, 'daemon');
    expect((await finding(db, order)).status).toBe('open');
  }));

  it('a one-off reconcile with other settings judges with the daemon\'s recorded ones', withDb(async (db) => {
    const order = await missedWebhookLedger(db);
    // The daemon judges with a 60 s grace period (as the demo does); the shell has 10 h.
    const daemonPass = await passWith(db, new Date(), 60, 'daemon');
    const [recorded] = await db.sql<{ origin: string; settings: Record<string, unknown> }[]>`select origin, settings from reconcile_runs where id = ${daemonPass.runId!}`;
    expect(recorded).toMatchObject({ origin: 'daemon', settings: { WEBHOOK_GRACE_SECONDS: 60, PAYOUT_SETTLEMENT_DAYS: 3 } });
    const opened = await finding(db, order);
    await acknowledgeDiscrepancy(db, opened.id, 'known: lost at the provider', 'anna');

    const oneOff = await reconcileCommand(db, { WEBHOOK_GRACE_SECONDS: '36000' });
    expect(oneOff.code).toBe(0);
    const summary = JSON.parse(oneOff.stdout) as { resolved: number; adoptedSettingsFrom?: number };
    expect(summary.adoptedSettingsFrom).toBe(daemonPass.runId);
    expect(summary.resolved).toBe(0);
    expect(oneOff.stderr).toContain('WEBHOOK_GRACE_SECONDS: 36000 -> 60');
    expect(await finding(db, order)).toMatchObject({ status: 'acknowledged', ack_note: 'known: lost at the provider' });
    const [run] = await db.sql<{ origin: string; grace: number }[]>`
      select origin, (settings->>'WEBHOOK_GRACE_SECONDS')::int as grace from reconcile_runs order by id desc limit 1`;
    expect(run).toEqual({ origin: 'command', grace: 60 });
    expect((await history(db, opened.id)).map((h) => h.to_status)).toEqual(['open', 'acknowledged']);

    // With the same settings as the daemon nothing is adopted.
    const same = await reconcileCommand(db, { WEBHOOK_GRACE_SECONDS: '60' });
    expect(same.code).toBe(0);
    expect((JSON.parse(same.stdout) as { adoptedSettingsFrom?: number }).adoptedSettingsFrom).toBeUndefined();
  }), 240_000);
});
