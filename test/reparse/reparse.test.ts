import { beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer } from '../../src/http/server.js';
import { cleanEnv, runCli } from '../e2e/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver } from '../helpers/receiver.js';
import { importCsv, OTHER_IBAN, pass } from '../statements/fixtures.js';
import { runReparse, type ReparseSummary } from '../../src/reparse/run.js';
import { silentLogger } from '../../src/log/logger.js';
import { classifyDelivery } from '../../src/webhooks/classify.js';
import { PARSER_VERSION } from '../../src/webhooks/parser-version.js';
import { derivedFields, storeAsOldParser, typedCount, typedSnapshot, type OldDelivery } from './old-deliveries.js';
import { testMetrics } from '../helpers/metrics.js';

async function db(label: string): Promise<TestDatabase> {
  const d = await createTestDatabase(`reparse_${label}`);
  return d;
}

const OLD_NUMBER_ERROR = 'amount_cents: Expected string, received number';
const time = (day: number, hour = 6) => `2026-03-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00.000000000Z`;
const payout = (uuid: string, sepa: string, amount: string, invoices: string, day = 2) =>
  `{"topic":"payout/complete","payout_uuid":"${uuid}","sepa_instruction_id":"${sepa}","amount_cents":${amount},"external_reference_ids":"${invoices}","event_time":"${time(day)}"}`;

const P1 = '00000000-0000-4000-8000-000000000001';
const P2 = '00000000-0000-4000-8000-000000000002';
const P3 = '00000000-0000-4000-8000-000000000003';
const P4 = '00000000-0000-4000-8000-000000000004';
const invoiceCreated = `{"topic":"invoice/created","invoice_uuid":"7a2b3c4d-1111-4222-8333-444455556666","order_uuid":"6f1c2a9e-8d44-4b1e-9a0e-3b1f2c3d4e51","external_reference_id":"INV-1","event_time":"${time(1)}"}`;
const widget = '{"topic":"widget/created","widget_uuid":"abc"}';
const badAmount = payout(P4, 'PO2026030200000004', '12.5', 'INV-4');

/**
 * What an older release stored: numeric amounts refused (invalid_shape), invoice/created not yet a
 * known topic, a topic nobody knows, an amount no release accepts, and a payout it did parse.
 */
const OLD: OldDelivery[] = [
  { body: payout(P1, 'PO2026030200000001', '100000', 'INV-1'), old: { status: 'invalid_shape', topic: 'payout/complete', error: OLD_NUMBER_ERROR } },
  { body: payout(P1, 'PO2026030200000001', '100000', 'INV-1'), old: { status: 'invalid_shape', topic: 'payout/complete', error: OLD_NUMBER_ERROR } },
  { body: payout(P2, 'PO2026030200000002', '80000', 'INV-2'), old: { status: 'invalid_shape', topic: 'payout/complete', error: OLD_NUMBER_ERROR } },
  { body: invoiceCreated, old: { status: 'unknown_topic', topic: 'invoice/created', error: 'unknown topic "invoice/created"' } },
  { body: widget, old: { status: 'unknown_topic', topic: 'widget/created', error: 'unknown topic "widget/created"' } },
  { body: badAmount, old: { status: 'invalid_shape', topic: 'payout/complete', error: OLD_NUMBER_ERROR } },
  { body: payout(P3, 'PO2026030200000003', '"60000"', 'INV-3') },
];

/** Bank statement: P1 credited 50 cents short, P2 exactly, P3 not at all; 03-05 covers P3's settlement window. */
async function statements(d: TestDatabase): Promise<void> {
  await importCsv(d, [
    { ref: 'S1', date: '2026-03-02', cents: 99_950n, sepa: 'PO2026030200000001' },
    { ref: 'S2', date: '2026-03-03', cents: 80_000n, sepa: 'PO2026030200000002' },
    { ref: 'S3', date: '2026-03-05', cents: 1_000n, sepa: 'RF000000000001', iban: OTHER_IBAN },
  ]);
}

// Real time: a reparse run is compared with the previous pass's start (reconcile/scope.ts).
const NOW = (aheadMs = 0) => new Date(Date.now() + aheadMs);
const openFindings = (d: TestDatabase) =>
  d.sql`select kind::text as kind, entity_id, subject, expected, observed, sepa_reference from discrepancies where status = 'open' order by kind, entity_id, subject`;

const reparse = (d: TestDatabase, options: Partial<Parameters<typeof runReparse>[1]> = {}): Promise<ReparseSummary> =>
  runReparse({ database: d, log: silentLogger(), ...testMetrics(d) }, { environment: 'sandbox', status: 'unparsed', dryRun: false, trigger: 'command', ...options });

describe('ledger reparse of deliveries an older parser stored', () => {
  let old: TestDatabase;
  let reference: TestDatabase;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    old = await db('old');
    reference = await db('reference');
    env = cleanEnv({ DATABASE_URL: old.url, LOG_LEVEL: 'warn', PROVIDER_ENV: 'sandbox' });
    await storeAsOldParser(old, OLD);
    await statements(old);
    // The same bytes received by this release, in the same order: what reparse must arrive at.
    const receiver = await startTestReceiver(reference);
    try {
      for (const d of OLD) expect((await postDelivery(receiver.url, d.body)).status).toBe(200);
    } finally {
      await receiver.close();
    }
    await statements(reference);
  });

  it('before: the payouts with numeric amounts are missing from reconciliation', async () => {
    await pass(old, NOW());
    const findings = await openFindings(old);
    // Credits the ledger cannot attribute: the payouts that carry their references are unparsed.
    expect(findings.filter((f) => f.kind === 'statement_credit_without_payout').map((f) => f.sepa_reference).sort()).toEqual(['PO2026030200000001', 'PO2026030200000002']);
    expect(findings.some((f) => f.kind === 'payout_amount_mismatch')).toBe(false);
  });

  it('--dry-run prints what would change and writes nothing', async () => {
    const before = { fields: await derivedFields(old), typed: await typedSnapshot(old) };
    const result = await runCli(['ledger', 'reparse', '--dry-run', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as ReparseSummary;
    expect(summary).toMatchObject({ skipped: false, dryRun: true, runId: null, examined: 6, changed: 5, parserVersion: PARSER_VERSION });
    expect(summary.outcomes).toEqual({ applied: 3, duplicate: 1, still_unparsed: 1, now_unparsed: 0, unchanged: 1 });
    expect(await derivedFields(old)).toEqual(before.fields);
    expect(await typedSnapshot(old)).toEqual(before.typed);
    expect((await old.sql`select count(*)::int as n from reparse_runs`)[0]!.n).toBe(0);
    expect((await old.sql`select count(*)::int as n from webhook_deliveries where parser_version = 0`)[0]!.n).toBe(OLD.length);
  });

  it('reparse gives the typed rows, applied decisions and payout findings as if understood at receipt', async () => {
    const result = await runCli(['ledger', 'reparse'], env);
    expect(result.code, result.stderr).toBe(0);
    // The table: per topic, status before and after, outcome and count.
    expect(result.stdout).toMatch(/examined 6|6 examined/);
    expect(result.stdout).toMatch(/payout\/complete\s+invalid_shape\s+parsed\s+applied\s+2/);
    expect(result.stdout).toMatch(/payout\/complete\s+invalid_shape\s+parsed\s+duplicate\s+1/);
    expect(result.stdout).toMatch(/payout\/complete\s+invalid_shape\s+invalid_shape\s+still_unparsed\s+1/);
    expect(result.stdout).toMatch(/invoice\/created\s+unknown_topic\s+parsed\s+applied\s+1/);

    expect(await derivedFields(old)).toEqual(await derivedFields(reference));
    expect(await typedSnapshot(old)).toEqual(await typedSnapshot(reference));
    // The amount no release accepts keeps its status, with this parser's reason.
    const current = classifyDelivery(Buffer.from(badAmount));
    expect(current.ok && current.status).toBe('invalid_shape');
    const [bad] = await old.sql`select parse_status::text as s, parse_error from webhook_deliveries where raw_body = ${Buffer.from(badAmount)}`;
    expect(bad).toEqual({ s: 'invalid_shape', parse_error: current.ok ? current.error : null });
    expect(bad!.parse_error).not.toBe(OLD_NUMBER_ERROR);
    // Unparsed ones are now recorded as judged by this parser; the one parsed then was not examined.
    const versions = await old.sql`select parse_status::text as s, parser_version as v from webhook_deliveries order by id`;
    expect(versions.map((r) => r.v)).toEqual([...OLD.slice(0, -1).map(() => PARSER_VERSION), 0]);

    const [run] = await old.sql`select trigger, status, status_filter, examined, outcomes, parser_version from reparse_runs`;
    expect(run).toEqual({
      trigger: 'command', status: 'complete', status_filter: 'unparsed', examined: 6, parser_version: PARSER_VERSION,
      outcomes: { applied: 3, duplicate: 1, still_unparsed: 1, now_unparsed: 0, unchanged: 1 },
    });

    const summary = await pass(old, NOW(120_000));
    // Typed rows with old arrival times are outside an incremental pass's scope: the reparse run makes it full.
    expect(summary.mode).toBe('full');
    // The next pass begins more than the skew allowance (60 s) after the reparse finished: incremental again.
    expect((await pass(old, NOW(180_000))).mode).toBe('incremental');
    await pass(reference, NOW(120_000));
    const findings = await openFindings(old);
    expect(findings).toEqual(await openFindings(reference));
    expect(findings.filter((f) => f.kind === 'payout_amount_mismatch')).toEqual([
      { kind: 'payout_amount_mismatch', entity_id: P1, subject: '', expected: '100000', observed: '99950', sepa_reference: 'PO2026030200000001' },
    ]);
    expect(findings.some((f) => f.kind === 'statement_credit_without_payout')).toBe(false);
  });

  it('a second run changes nothing', async () => {
    const before = { fields: await derivedFields(old), typed: await typedSnapshot(old) };
    const summary = await reparse(old, { status: 'all' });
    expect(summary).toMatchObject({ examined: OLD.length, changed: 0 });
    expect(summary.outcomes.unchanged).toBe(OLD.length);
    expect(summary.changes).toEqual([]);
    expect(await derivedFields(old)).toEqual(before.fields);
    expect(await typedSnapshot(old)).toEqual(before.typed);
  });

  it('--since limits the run to deliveries received from then on; bad usage exits 2', async () => {
    const since = new Date(Date.now() + 3_600_000);
    const summary = await reparse(old, { status: 'all', since: since.toISOString() });
    expect(summary).toMatchObject({ examined: 0, changed: 0 });
    const [run] = await old.sql`select extract(epoch from since)::float8 * 1000 as since, status_filter from reparse_runs where id = ${summary.runId}`;
    expect(run).toEqual({ since: since.getTime(), status_filter: 'all' });
    for (const args of [['ledger', 'reparse', '--status', 'parsed'], ['ledger', 'reparse', '--since', 'yesterday'], ['ledger', 'rebuild']]) {
      const result = await runCli(args, env);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/--status|--since|reparse/);
    }
  });

  it('report deliveries lists what is still unparsed, by topic and reason', async () => {
    const result = await runCli(['report', 'deliveries', '--format', 'json'], env);
    expect(result.code, result.stderr).toBe(0);
    const rows = JSON.parse(result.stdout) as Record<string, unknown>[];
    const current = classifyDelivery(Buffer.from(badAmount));
    expect(rows.map(({ status, topic, reason, count, parser_version }) => ({ status, topic, reason, count, parser_version }))).toEqual([
      { status: 'unknown_topic', topic: 'widget/created', reason: 'unknown topic "widget/created"', count: 1, parser_version: PARSER_VERSION },
      { status: 'invalid_shape', topic: 'payout/complete', reason: current.ok ? current.error : '', count: 1, parser_version: PARSER_VERSION },
    ]);
    const csv = await runCli(['report', 'deliveries', '--status', 'unknown_topic'], env);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.split('\r\n')[0]).toBe('status,topic,reason,count,first_delivery_id,first_received_at,last_received_at,parser_version');
    expect(csv.stdout.trim().split('\r\n')).toHaveLength(2);
    expect((await runCli(['report', 'deliveries', '--status', 'parsed'], env)).code).toBe(2);
  });

  it('GET /api/deliveries serves the same listing, filtered by status and paged', async () => {
    const token = 'operator-9d096e45c0e1e3a3a695eaf63a61e569';
    const server = await startHttpServer({
      host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test',
      routes: operatorRoutes({ config: loadConfig({ OPERATOR_TOKEN: token, PROVIDER_ENV: 'sandbox' }), database: old, log: silentLogger() }),
    });
    try {
      const get = async (path: string) => {
        const response = await request(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
        return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
      };
      const all = await get('/api/deliveries');
      expect(all.status, all.body).toBe(200);
      expect((JSON.parse(all.body) as { status: string }[]).map((r) => r.status)).toEqual(['unknown_topic', 'invalid_shape']);
      const unknown = JSON.parse((await get('/api/deliveries?status=unknown_topic')).body) as { topic: string; count: number }[];
      expect(unknown.map((r) => [r.topic, r.count])).toEqual([['widget/created', 1]]);
      const first = await get('/api/deliveries?limit=1');
      expect(JSON.parse(first.body)).toHaveLength(1);
      const second = await get(`/api/deliveries?limit=1&cursor=${String(first.headers['next-cursor'])}`);
      expect((JSON.parse(second.body) as { status: string }[]).map((r) => r.status)).toEqual(['invalid_shape']);
      expect((await get('/api/deliveries?status=parsed')).status).toBe(400);
    } finally {
      await server.close();
    }
  });
});

describe('reparse beside the receiver', () => {
  it('a retry received after the upgrade is applied once: the old delivery becomes its duplicate', async () => {
    const d = await db('retry');
    const body = payout(P1, 'PO2026030200000001', '100000', 'INV-1');
    await storeAsOldParser(d, [{ body, old: { status: 'invalid_shape', topic: 'payout/complete', error: OLD_NUMBER_ERROR } }]);
    const receiver = await startTestReceiver(d);
    try {
      const post = await postDelivery(receiver.url, body);
      expect(post.body).toMatchObject({ duplicate: false, parse_status: 'parsed' });
    } finally {
      await receiver.close();
    }
    const summary = await reparse(d);
    expect(summary.outcomes).toMatchObject({ applied: 0, duplicate: 1 });
    const rows = await d.sql`select parse_status::text as s, applied, event_key from webhook_deliveries order by id`;
    expect(rows.map((r) => [r.s, r.applied])).toEqual([['parsed', false], ['parsed', true]]);
    expect(rows[0]!.event_key).toBe(rows[1]!.event_key);
    expect((await d.sql`select count(*)::int as n from payout_events`)[0]!.n).toBe(1);
  });

  it('retries posted while reparse runs: exactly one applied delivery and one typed row per event', async () => {
    const d = await db('concurrent');
    const bodies = Array.from({ length: 60 }, (_, i) => payout(`00000000-0000-4000-8000-${String(1000 + i).padStart(12, '0')}`, `PO20260302${String(i).padStart(8, '0')}`, String(1000 + i), 'INV-1'));
    await storeAsOldParser(d, bodies.map((body) => ({ body, old: { status: 'invalid_shape' as const, topic: 'payout/complete', error: OLD_NUMBER_ERROR } })));
    const receiver = await startTestReceiver(d);
    try {
      // Every event's retry arrives while reparse walks the old deliveries in batches of 5.
      // One retry at a time, so receipts and reparse batches interleave over the whole run.
      const posting = (async () => {
        for (const body of bodies) expect((await postDelivery(receiver.url, body)).status).toBe(200);
      })();
      const [summary] = await Promise.all([reparse(d, { batchSize: 5 }), posting]);
      expect(summary, JSON.stringify(summary)).toMatchObject({ examined: 60, aborted: false });
      expect(summary.outcomes.applied + summary.outcomes.duplicate).toBe(60);
    } finally {
      await receiver.close();
    }
    const [counts] = await d.sql`
      select count(*)::int as deliveries, count(*) filter (where applied)::int as applied, count(distinct event_key)::int as events,
             (select count(*)::int from payout_events) as typed
      from webhook_deliveries`;
    expect(counts).toEqual({ deliveries: 120, applied: 60, events: 60, typed: 60 });
    expect(await typedCount(d)).toBe(60);
  });

  it('a delivery whose typed row the ledger refuses is isolated by halving and stays unparsed; its neighbours are applied', async () => {
    const d = await db('refused');
    const bodies = Array.from({ length: 16 }, (_, i) => payout(`00000000-0000-4000-8000-${String(2000 + i).padStart(12, '0')}`, `PO20260303${String(i).padStart(8, '0')}`, String(2000 + i), 'INV-1'));
    await storeAsOldParser(d, bodies.map((body) => ({ body, old: { status: 'invalid_shape' as const, topic: 'payout/complete', error: OLD_NUMBER_ERROR } })));
    // A rule the parser does not know: the schemas let the row through and only the statement refuses it.
    await d.sql`alter table payout_events add constraint refuse_one check (amount_cents <> 2011)`;
    const summary = await reparse(d, { batchSize: 16 });
    expect(summary.outcomes).toMatchObject({ applied: 15, still_unparsed: 1 });
    const rows = await d.sql<{ s: string; applied: boolean; parse_error: string | null }[]>`
      select parse_status::text as s, applied, parse_error from webhook_deliveries order by id`;
    expect(rows.filter((r) => r.s === 'parsed' && r.applied)).toHaveLength(15);
    const refused = rows[11]!;
    expect(refused).toMatchObject({ s: 'invalid_shape', applied: false });
    expect(refused.parse_error).toMatch(/^the ledger refused the parsed fields: .*refuse_one/);
    expect((await d.sql`select count(*)::int as n from payout_events`)[0]!.n).toBe(15);
  });
});
