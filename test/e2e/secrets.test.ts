import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type Daemon } from '../../src/daemon/daemon.js';
import { streamDiscrepancies, parseDiscrepancyQuery } from '../../src/reports/discrepancies.js';
import { DAY_MS, DEFAULT_FAULT_RATES, startSimulator, type Simulator } from '../../sim/index.js';
import { computeSignature } from '../../src/webhooks/signature.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { daemonConfig } from './harness.js';

/**
 * No secret leaves the process: the provider's API key, the webhook signing secret, the operator
 * tokens and the database password appear in no log line (at trace level, so every line is
 * written), no metric, no report, no page, no health body and no ledger row (stored headers, run
 * errors) of a daemon that polled, reconciled, received deliveries (one carrying credentials of
 * other hops in its headers) and refused forged ones.
 */
const OPERATOR = 'operator-417e0dc7b5b971a7a0487529734609bb';
const NAMED = 'named-7b4d8b8c0e8bf7515c4eba1f62ad78d4';
const DB_PASSWORD = 'db-password-never-shown-4711';

let db: TestDatabase;
useTestDatabase('secrets', (database) => (db = database));
let sim: Simulator;
let daemon: Daemon;
const logs: string[] = [];

beforeAll(async () => {
  sim = await startSimulator({ seed: 'secrets', faults: DEFAULT_FAULT_RATES, business: { ordersPerDay: 40 } });
  // A role of the test's own whose password the daemon must use and never show: the embedded
  // Postgres checks passwords, a trust-auth server ignores it.
  await db.sql.unsafe(`do $$ begin
    if not exists (select from pg_roles where rolname = 'secrets_tester') then create role secrets_tester login superuser; end if;
  end $$`);
  await db.sql.unsafe(`alter role secrets_tester password '${DB_PASSWORD}'`);
  const url = new URL(db.url);
  url.username = 'secrets_tester';
  url.password = DB_PASSWORD;
  const config = daemonConfig({ sim, databaseUrl: url.toString(), graceSeconds: 1, extra: { OPERATOR_TOKEN: OPERATOR, OPERATOR_TOKENS: `ada:${NAMED}`, LOG_LEVEL: 'trace' } });
  const log = pino({ level: 'trace' }, new Writable({ write: (chunk, _e, done) => { logs.push(chunk.toString()); done(); } }));
  daemon = await startDaemon(config, log);
  for (const topic of ['order', 'payout', 'invoice']) await daemon.provider!.registerWebhook(topic, `${daemon.url}/webhooks`);
});

afterAll(async () => {
  await sim?.stop();
  await daemon?.stop('test done');
});

async function text(url: string, token?: string): Promise<string> {
  const r = await request(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return r.body.text();
}

describe('secrets', () => {
  it('appear in no log, metric, report, page or health body', async () => {
    await sim.advance(DAY_MS);
    await sim.drain();
    await daemon.pollNow();
    await daemon.reconcileNow();
    // Forged and wrongly signed deliveries, and operator calls with a wrong token: the refusal paths log too.
    const body = JSON.stringify({ topic: 'order/confirmed' });
    await request(`${daemon.url}/webhooks`, { method: 'POST', body, headers: { 'x-service-signature': computeSignature(Buffer.from(body), 'not-the-secret') } }).then((r) => r.body.text());
    await text(`${daemon.url}/api/discrepancies`, 'wrong-token-000000000000');
    // A signed delivery that carries credentials of other hops in its headers: the ledger keeps its headers.
    const signed = JSON.stringify({ topic: 'order/confirmed', order_uuid: '00000000-0000-4000-8000-000000000001' });
    const carrying = await request(`${daemon.url}/webhooks`, {
      method: 'POST',
      body: signed,
      headers: { 'x-service-signature': computeSignature(Buffer.from(signed), sim.secrets.sandbox), authorization: `Bearer ${OPERATOR}`, 'api-token': sim.apiKeys.sandbox, cookie: `t=${NAMED}` },
    });
    await carrying.body.text();
    expect(carrying.statusCode).toBe(200);

    const outputs = [
      ...logs,
      await text(daemon.metricsUrl),
      await text(`${daemon.url}/healthz`),
      await text(`${daemon.url}/readyz`),
      await text(`${daemon.url}/`),
      await text(`${daemon.url}/api/session`, NAMED),
      await text(`${daemon.url}/api/discrepancies?format=csv&status=all`, OPERATOR),
      await text(`${daemon.url}/api/overview`, OPERATOR),
      await text(`${daemon.url}/api/orders?format=csv`, OPERATOR),
      await text(`${daemon.url}/api/payouts?format=json`, OPERATOR),
      await text(`${daemon.url}/api/deliveries?format=json`, OPERATOR),
      // The ledger itself: stored headers, run records' errors.
      JSON.stringify(await db.sql`select headers from webhook_deliveries`),
      JSON.stringify(await db.sql`select error, holder from poll_runs`),
      JSON.stringify(await db.sql`select error from reconcile_runs`),
    ];
    let report = '';
    await streamDiscrepancies(daemon.ctx.database, parseDiscrepancyQuery({ status: 'all', format: 'json' }).filters, 'json',
      new Writable({ write: (chunk, _e, done) => { report += chunk.toString(); done(); } }));
    outputs.push(report);

    const all = outputs.join('\n');
    expect(logs.length).toBeGreaterThan(20);
    expect(all).toContain('"msg":"poll run started"');
    for (const secret of [sim.apiKeys.sandbox, sim.secrets.sandbox, OPERATOR, NAMED, DB_PASSWORD]) {
      expect(all.includes(secret), `a secret of ${secret.length} characters was found`).toBe(false);
    }
  });
});
