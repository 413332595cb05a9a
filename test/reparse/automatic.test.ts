import { afterAll, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load.js';
import { startDaemon, type Daemon } from '../../src/daemon/daemon.js';
import { silentLogger } from '../../src/log/logger.js';
import { PARSER_VERSION } from '../../src/webhooks/parser-version.js';
import { RARE_CRON, waitFor } from '../e2e/harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { derivedFields, storeAsOldParser, typedSnapshot } from './old-deliveries.js';

let db: TestDatabase | undefined;
let daemon: Daemon | undefined;
afterAll(async () => {
  await daemon?.stop('test done');
});

const payout = (uuid: string, amount: string) =>
  `{"topic":"payout/complete","payout_uuid":"${uuid}","sepa_instruction_id":"PO${uuid.slice(-8)}","amount_cents":${amount},"external_reference_ids":"INV-1","event_time":"2026-03-02T06:00:00.000000000Z"}`;
const NUMBER_ERROR = 'amount_cents: Expected string, received number';

it('the daemon reparses what an older parser left unparsed by itself after the upgrade, once', { timeout: 60_000 }, async () => {
  db = await createTestDatabase('reparse_automatic');
  await storeAsOldParser(db, [
    { body: payout('00000000-0000-4000-8000-000000000001', '100000'), old: { status: 'invalid_shape', topic: 'payout/complete', error: NUMBER_ERROR } },
    { body: payout('00000000-0000-4000-8000-000000000001', '100000'), old: { status: 'invalid_shape', topic: 'payout/complete', error: NUMBER_ERROR } },
    { body: payout('00000000-0000-4000-8000-000000000002', '2500'), old: { status: 'invalid_shape', topic: 'payout/complete', error: NUMBER_ERROR } },
    { body: '{"topic":"widget/created"}', old: { status: 'unknown_topic', topic: 'widget/created', error: 'unknown topic "widget/created"' } },
    { body: payout('00000000-0000-4000-8000-000000000003', '"700"') },
  ]);
  // Unparsed by this very parser: nothing for the automatic run (only older parsers' verdicts are).
  await db.sql`
    insert into webhook_deliveries (delivery_uuid, environment, headers, raw_body, signature_valid, topic, parse_status, parse_error, parser_version)
    values (gen_random_uuid(), 'sandbox', '{}'::jsonb, ${Buffer.from('{"topic":"gadget/created"}')}, true, 'gadget/created', 'unknown_topic',
            'unknown topic "gadget/created"', ${PARSER_VERSION})`;

  const config = loadConfig({
    DATABASE_URL: db.url, PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', PROVIDER_ENV: 'sandbox',
    WEBHOOK_SECRET: 'whsec_automatic_a19f68ee21fcd01ecdd313c0b4ccdeb4', POLL_SCHEDULE: RARE_CRON, RECONCILE_SCHEDULE: RARE_CRON, DB_POOL_MAX: '4',
  });
  daemon = await startDaemon(config, silentLogger());
  const run = await waitFor('the automatic reparse run', async () => {
    const [row] = await db!.sql`select id, trigger, status, status_filter, examined, outcomes from reparse_runs where status <> 'running'`;
    return row;
  });
  expect(run).toMatchObject({
    trigger: 'automatic', status: 'complete', status_filter: 'unparsed', examined: 4,
    outcomes: { applied: 2, duplicate: 1, still_unparsed: 0, now_unparsed: 0, unchanged: 1 },
  });
  const fields = await derivedFields(db);
  expect(fields.map((f) => [f.parse_status, f.applied])).toEqual([
    ['parsed', true], ['parsed', false], ['parsed', true], ['unknown_topic', false], ['parsed', true], ['unknown_topic', false],
  ]);
  const typed = await typedSnapshot(db);
  expect(typed.payout_events!.map((r) => String((JSON.parse(r) as { amount_cents: number }).amount_cents)).sort()).toEqual(['100000', '2500', '700']);
  // It asked for a reconciliation pass, so the payouts are reconciled without waiting for the schedule.
  await waitFor('a reconciliation pass', async () => ((await db!.sql`select 1 from reconcile_runs where status = 'complete'`).length > 0 ? true : undefined));

  const metrics = await (await request(daemon.metricsUrl)).body.text();
  expect(metrics).toMatch(/^bnpl_recon_reparse_deliveries_total\{outcome="applied"\} 2$/m);
  expect(metrics).toMatch(/^bnpl_recon_reparse_deliveries_total\{outcome="duplicate"\} 1$/m);
  expect(metrics).toMatch(/^bnpl_recon_reparse_deliveries_total\{outcome="now_unparsed"\} 0$/m);

  // Again (the hourly look, or another replica's start): nothing older is left, so no run and no change.
  await daemon.reparseNow();
  expect((await db.sql`select count(*)::int as n from reparse_runs`)[0]!.n).toBe(1);
  expect(await derivedFields(db)).toEqual(fields);
});
