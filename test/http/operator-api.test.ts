import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load.js';
import { healthRoutes } from '../../src/http/health.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { DISCREPANCY_COLUMNS } from '../../src/reports/discrepancies.js';
import { PAYOUT_COLUMNS } from '../../src/reports/payouts.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { orderEvent, snapshot, pollRun, at, eventTime } from '../reconcile/fixtures.js';
import { importCsv, payoutEvent } from '../statements/fixtures.js';
import { parseCsv } from '../reports/csv-reader.js';

const SHARED = 'shared-46d6e615fcadf914a87ed188962cf565';
const ALICE = 'alice-2e9a6b8f9ae100b959a57a8973c90c31';
const BOB = 'bob-e0e9ff5f5eee821e8e8c956ed321a8a6';
const HOSTILE = '=HYPERLINK("http://evil.invalid/x","click")';
let database: TestDatabase;
let server: HttpServer;
let production: HttpServer;
let disabled: HttpServer;

interface Answer { status: number; type: string; headers: Record<string, unknown>; text: string; bytes: Buffer }

async function call(url: string, options: { method?: 'GET' | 'POST'; token?: string; body?: string; accept?: string; scheme?: string } = {}): Promise<Answer> {
  const response = await request(url, {
    method: options.method ?? 'GET',
    headers: {
      ...(options.token ? { authorization: `${options.scheme ?? 'Bearer'} ${options.token}` } : {}),
      ...(options.accept ? { accept: options.accept } : {}),
      'content-type': 'application/json',
    },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  const bytes = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, type: String(response.headers['content-type']), headers: response.headers, text: bytes.toString('utf8'), bytes };
}

const json = async <T = Record<string, unknown>[]>(path: string, token = ALICE, base = () => server.url): Promise<T> => {
  const answer = await call(`${base()}${path}`, { token });
  expect(answer.status, answer.text).toBe(200);
  return JSON.parse(answer.text) as T;
};

const ids = (rows: { id: unknown }[]) => rows.map((r) => r.id);
let sandboxIds: number[] = [];
let productionId = 0;
let mismatchId = 0;
let hostileId = 0;
let orderFindingId = 0;
const order = randomUUID();

beforeAll(async () => {
  database = await createTestDatabase('operator_api');
  const log = silentLogger();
  const routes = (env: Record<string, string>) => [...healthRoutes(database, { isStopping: () => false, hasSigningSecret: () => true }), ...operatorRoutes({ config: loadConfig(env), database, log })];
  const tokens = { OPERATOR_TOKEN: SHARED, OPERATOR_TOKENS: `alice:${ALICE}, bob:${BOB}` };
  server = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'test', routes: routes({ ...tokens, PROVIDER_ENV: 'sandbox' }) });
  production = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'test', routes: routes({ ...tokens, PROVIDER_ENV: 'production' }) });
  disabled = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'test', routes: routes({}) });

  // Twelve sandbox findings, so numeric id order (…, 9, 10, 11) differs from text order (1, 10, 11, 2, …).
  const run = await pollRun(database, at(0));
  await snapshot(database, { order, state: 'confirmed', seenAt: at(0), runId: run, externalReferenceId: 'Müller-4711' });
  await orderEvent(database, { order, state: 'authorized', eventTime: eventTime(-5), receivedAt: at(-4), externalReferenceId: 'Müller-4711' });
  const insert = async (env: string, kind: string, status: string, entity: string, extra: { ref?: string; sepa?: string; expected?: string; observed?: string; detected?: string } = {}) => {
    const [row] = await database.sql<{ id: string }[]>`
      insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, external_reference_id, sepa_reference,
                                 expected, observed, details, first_detected_at)
      values (${env}, ${kind}, ${status}, ${kind.startsWith('payout') ? 'payout' : 'order'}, ${entity}, '', ${extra.ref ?? null},
              ${extra.sepa ?? null}, ${extra.expected ?? null}, ${extra.observed ?? null}, 'A sentence.',
              ${extra.detected ?? new Date().toISOString()}::timestamptz)
      returning id::text`;
    const id = Number(row!.id);
    await database.sql`insert into discrepancy_history (discrepancy_id, at, from_status, to_status, actor, reason)
                       values (${id}, now() - interval '2 hours', null, 'open', 'reconciler', 'found')`;
    if (status !== 'open') {
      await database.sql`insert into discrepancy_history (discrepancy_id, at, from_status, to_status, actor, reason)
                         values (${id}, now() - interval '1 hour', 'open', ${status}::discrepancy_status, 'reconciler', 'cleared')`;
    }
    return id;
  };
  orderFindingId = await insert('sandbox', 'missed_webhook', 'open', order, { ref: 'Müller-4711', expected: 'confirmed' });
  hostileId = await insert('sandbox', 'orphan_webhook', 'open', randomUUID(), { ref: HOSTILE });
  mismatchId = await insert('sandbox', 'payout_amount_mismatch', 'open', randomUUID(), { sepa: 'PO0000000000000042', expected: '12050', observed: '12000' });
  await insert('sandbox', 'payout_not_on_statement', 'open', randomUUID(), { sepa: 'PO0000000000000043', expected: '-700', detected: '2020-01-01T00:00:00Z' });
  await insert('sandbox', 'state_mismatch', 'resolved', randomUUID(), { ref: '+SUM(1,2)' });
  await insert('sandbox', 'duplicate_event', 'acknowledged', randomUUID(), { ref: '@cmd' });
  for (let i = 0; i < 6; i++) await insert('sandbox', 'missed_webhook', 'open', randomUUID(), { ref: `REF 100%_${i}` });
  productionId = await insert('production', 'orphan_webhook', 'open', randomUUID(), { ref: 'PROD-1' });
  sandboxIds = (await database.sql<{ id: string }[]>`select id::text from discrepancies where environment = 'sandbox' order by discrepancies.id`).map((r) => Number(r.id));

  const payout = await payoutEvent(database, { sepa: 'PO0000000000000042', cents: 12050n, invoices: ['INV-1', 'INV-2'], eventTime: '2026-03-02T10:00:00Z' });
  await payoutEvent(database, { uuid: payout.replace(/^./, payout[0] === 'a' ? 'b' : 'a'), sepa: 'PO0000000000000044', cents: 990n, eventTime: '2026-03-03T10:00:00Z' });
  await importCsv(database, [{ ref: 'BANK-1', date: '2026-03-04', cents: 12000n, sepa: 'PO0000000000000042' }]);
});

afterAll(async () => {
  await Promise.all([server?.close(), production?.close(), disabled?.close()]);
});

describe('operator API: authorisation', () => {
  it('refuses a missing or wrong token (401), everything when no token is configured (403), and knows named tokens', async () => {
    expect((await call(`${server.url}/api/discrepancies`)).status).toBe(401);
    const wrong = await call(`${server.url}/api/discrepancies`, { token: 'wrong-token-xxxxxxxxxx' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Bearer');
    expect((await call(`${server.url}/api/discrepancies`, { token: `${ALICE}x` })).status).toBe(401);
    expect((await call(`${server.url}/api/orders`, { token: ALICE, scheme: 'Basic' })).status).toBe(401);
    expect((await call(`${disabled.url}/api/discrepancies`, { token: SHARED })).status).toBe(403);
    expect((await call(`${server.url}/api/nothing`, { token: ALICE })).status).toBe(404);
    expect(await json('/api/session', ALICE)).toEqual({ operator: 'alice', environment: 'sandbox', time_zone: 'UTC' });
    expect(await json('/api/session', BOB)).toEqual({ operator: 'bob', environment: 'sandbox', time_zone: 'UTC' });
    expect(await json('/api/session', SHARED)).toEqual({ operator: 'api', environment: 'sandbox', time_zone: 'UTC' });
    expect((await call(`${server.url}/api/session`, { token: ALICE, scheme: 'bearer' })).status).toBe(200);
  });

  it('validates OPERATOR_TOKENS without ever repeating a token in the message', () => {
    const secret = 'short';
    for (const [value, message] of [
      [`alice:${secret}`, /token of 'alice' must be at least 16/],
      [`${ALICE}`, /entry 1 must be name:token/],
      [`alice:${ALICE},alice:${BOB}`, /'alice' is given twice/],
      [`alice:${ALICE},bob:${ALICE}`, /also another name's/],
      [`al ice:${ALICE}`, /entry 1/],
    ] as const) {
      let error: unknown;
      try {
        loadConfig({ OPERATOR_TOKENS: value });
      } catch (e) {
        error = e;
      }
      expect(String(error)).toMatch(/OPERATOR_TOKENS/);
      expect(String(error)).toMatch(message);
      expect(String(error)).not.toContain(ALICE);
      expect(String(error)).not.toContain(`:${secret}`);
    }
    expect(loadConfig({ OPERATOR_TOKENS: `alice:${ALICE}` }).OPERATOR_TOKENS).toEqual([{ name: 'alice', token: ALICE }]);
  });

  it('answers for its own PROVIDER_ENV only: another environment is 403 to read and 404 to act on', async () => {
    expect(ids(await json('/api/discrepancies?status=all'))).toEqual(sandboxIds);
    expect(ids(await json('/api/discrepancies?status=all&env=sandbox'))).toEqual(sandboxIds);
    for (const path of ['/api/discrepancies?env=production', '/api/orders?env=production', '/api/payouts?env=production']) {
      const answer = await call(`${server.url}${path}`, { token: ALICE });
      expect(answer.status, path).toBe(403);
      expect(answer.text).toContain('this daemon serves sandbox');
    }
    expect((await call(`${server.url}/api/discrepancies?env=staging`, { token: ALICE })).status).toBe(403);
    expect((await call(`${server.url}/api/discrepancies/${productionId}`, { token: ALICE })).status).toBe(404);
    const ack = await call(`${server.url}/api/discrepancies/${productionId}/ack`, { method: 'POST', token: ALICE, body: '{"note":"not mine"}' });
    expect(ack.status).toBe(404);
    const [still] = await database.sql`select status from discrepancies where id = ${productionId}`;
    expect(still).toEqual({ status: 'open' });
    // The production daemon, on the same database, sees only its own row.
    expect(ids(await json('/api/discrepancies?status=all', ALICE, () => production.url))).toEqual([productionId]);
    expect(await json('/api/payouts', ALICE, () => production.url)).toEqual([]);
  });
});

describe('operator API: formats', () => {
  it('answers JSON by default, CSV for ?format=csv or Accept: text/csv, XLSX when asked, 400 otherwise', async () => {
    const plain = await call(`${server.url}/api/discrepancies`, { token: ALICE });
    expect(plain.type).toContain('application/json');
    const rows = JSON.parse(plain.text) as Record<string, unknown>[];
    expect(Object.keys(rows[0]!)).toEqual([...DISCREPANCY_COLUMNS]);
    for (const options of [{ path: '?format=csv' }, { path: '', accept: 'text/csv' }, { path: '', accept: 'text/csv;q=0.9, */*;q=0.1' }]) {
      const csv = await call(`${server.url}/api/discrepancies${options.path}`, { token: ALICE, ...(options.accept ? { accept: options.accept } : {}) });
      expect(csv.type, JSON.stringify(options)).toContain('text/csv');
      expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="discrepancies-sandbox-\d{4}-\d{2}-\d{2}\.csv"$/);
      expect(parseCsv(csv.text)[0]).toEqual([...DISCREPANCY_COLUMNS]);
      expect(parseCsv(csv.text)).toHaveLength(rows.length + 1);
    }
    // ?format wins over Accept.
    expect((await call(`${server.url}/api/discrepancies?format=json`, { token: ALICE, accept: 'text/csv' })).type).toContain('application/json');
    const xlsx = await call(`${server.url}/api/discrepancies?format=xlsx`, { token: ALICE });
    expect(xlsx.status).toBe(200);
    expect(xlsx.type).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(xlsx.bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    expect(xlsx.headers['content-disposition']).toMatch(/\.xlsx"$/);
    const byAccept = await call(`${server.url}/api/orders`, { token: ALICE, accept: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
    expect(byAccept.bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    expect((await call(`${server.url}/api/discrepancies?format=xml`, { token: ALICE })).status).toBe(400);
    expect((await call(`${server.url}/api/payouts?format=xml`, { token: ALICE })).status).toBe(400);
  });

  it('writes CSV for spreadsheets: BOM on request, ; or tab delimiter, numeric id order, neutralised formulas, amounts, UTC seconds', async () => {
    const bom = await call(`${server.url}/api/discrepancies?format=csv&status=all&bom=1`, { token: ALICE });
    expect([...bom.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const noBom = await call(`${server.url}/api/discrepancies?format=csv&status=all`, { token: ALICE });
    expect(noBom.text.startsWith('id,')).toBe(true);
    const records = parseCsv(noBom.text);
    expect(records.slice(1).map((r) => Number(r[0]))).toEqual(sandboxIds);
    expect(sandboxIds.length).toBeGreaterThanOrEqual(10);
    const col = (name: string) => DISCREPANCY_COLUMNS.indexOf(name as (typeof DISCREPANCY_COLUMNS)[number]);
    const byId = new Map(records.slice(1).map((r) => [Number(r[0]), r]));
    expect(byId.get(hostileId)![col('external_reference_id')]).toBe(`'${HOSTILE}`);
    expect(noBom.text).toContain(`"'=HYPERLINK(""http://evil.invalid/x"",""click"")"`);
    const refs = records.slice(1).map((r) => r[col('external_reference_id')]);
    expect(refs).toContain("'+SUM(1,2)");
    expect(refs).toContain("'@cmd");
    expect(refs).toContain('Müller-4711');
    const mismatch = byId.get(mismatchId)!;
    expect([mismatch[col('amount_cents')], mismatch[col('amount')], mismatch[col('currency')]]).toEqual(['50', '0.50', 'EUR']);
    // A negative amount is a number we wrote, not a formula: not neutralised.
    expect(records.slice(1).map((r) => r[col('amount')])).toContain('-7.00');
    expect(byId.get(hostileId)![col('amount')]).toBe('');
    expect(mismatch[col('first_detected_at')]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    // JSON is for programs: the same value as stored.
    const asJson = await json(`/api/discrepancies?status=all`);
    expect(asJson.find((r) => r.id === hostileId)!.external_reference_id).toBe(HOSTILE);

    const semi = await call(`${server.url}/api/discrepancies?format=csv&delimiter=;`, { token: ALICE });
    expect(semi.text.split('\r\n')[0]).toBe(DISCREPANCY_COLUMNS.join(';'));
    const semiNamed = await call(`${server.url}/api/discrepancies?format=csv&delimiter=semicolon`, { token: ALICE });
    expect(semiNamed.text).toBe(semi.text);
    const tab = await call(`${server.url}/api/discrepancies?format=csv&delimiter=tab`, { token: ALICE });
    expect(tab.text.split('\r\n')[0]).toBe(DISCREPANCY_COLUMNS.join('\t'));
    expect((await call(`${server.url}/api/discrepancies?format=csv&delimiter=|`, { token: ALICE })).status).toBe(400);
    expect((await call(`${server.url}/api/discrepancies?format=csv&bom=maybe`, { token: ALICE })).status).toBe(400);
  });
});

describe('operator API: filters and paging', () => {
  it('filters by status, kind (repeated or comma-separated), since and reference text, like the command line', async () => {
    const kinds = async (query: string) => (await json(`/api/discrepancies?${query}`)).map((r) => r.kind);
    expect((await json('/api/discrepancies')).every((r) => r.status === 'open')).toBe(true);
    expect(await kinds('status=resolved')).toEqual(['state_mismatch']);
    expect(await kinds('status=acknowledged')).toEqual(['duplicate_event']);
    expect(await kinds('status=all')).toHaveLength(sandboxIds.length);
    expect(new Set(await kinds('kind=orphan_webhook&kind=payout_amount_mismatch'))).toEqual(new Set(['orphan_webhook', 'payout_amount_mismatch']));
    expect(new Set(await kinds('kind=orphan_webhook,payout_amount_mismatch'))).toEqual(new Set(['orphan_webhook', 'payout_amount_mismatch']));
    expect(await kinds('since=2021-01-01&kind=payout_not_on_statement')).toEqual([]);
    expect(await kinds('since=2019-12-31&kind=payout_not_on_statement')).toEqual(['payout_not_on_statement']);
    expect(ids(await json('/api/discrepancies?q=müller'))).toEqual([orderFindingId]);
    expect(await kinds('q=po0000000000000042')).toEqual(['payout_amount_mismatch']);
    // LIKE wildcards in the text are literal.
    expect(await json('/api/discrepancies?q=100%25_')).toHaveLength(6);
    expect(await json('/api/discrepancies?q=100x')).toEqual([]);
    for (const bad of ['status=closed', 'kind=nonsense', 'since=yesterday']) {
      expect((await call(`${server.url}/api/discrepancies?${bad}`, { token: ALICE })).status, bad).toBe(400);
    }
  });

  it('pages with limit and an opaque cursor (Next-Cursor and Link headers), in JSON and CSV, to the same rows as one read', async () => {
    const seen: number[] = [];
    let path: string | undefined = '/api/discrepancies?status=all&limit=5';
    let pages = 0;
    while (path) {
      const answer = await call(`${server.url}${path}`, { token: ALICE });
      expect(answer.status).toBe(200);
      const page = JSON.parse(answer.text) as { id: number }[];
      expect(page.length).toBeLessThanOrEqual(5);
      seen.push(...ids(page) as number[]);
      const next = answer.headers['next-cursor'] as string | undefined;
      if (next) expect(answer.headers.link).toBe(`</api/discrepancies?status=all&limit=5&cursor=${next}>; rel="next"`);
      path = next ? `/api/discrepancies?status=all&limit=5&cursor=${next}` : undefined;
      pages += 1;
    }
    expect(seen).toEqual(sandboxIds);
    expect(pages).toBe(Math.ceil(sandboxIds.length / 5));
    const csvPage = await call(`${server.url}/api/discrepancies?status=all&format=csv&limit=3`, { token: ALICE });
    expect(parseCsv(csvPage.text).slice(1).map((r) => Number(r[0]))).toEqual(sandboxIds.slice(0, 3));
    const csvNext = await call(`${server.url}/api/discrepancies?status=all&format=csv&limit=3&cursor=${String(csvPage.headers['next-cursor'])}`, { token: ALICE });
    expect(parseCsv(csvNext.text)[0]).toEqual([...DISCREPANCY_COLUMNS]);
    expect(parseCsv(csvNext.text).slice(1).map((r) => Number(r[0]))).toEqual(sandboxIds.slice(3, 6));
    const last = await call(`${server.url}/api/discrepancies?status=all&limit=${sandboxIds.length}`, { token: ALICE });
    expect(last.headers['next-cursor']).toBeUndefined();
    for (const bad of ['limit=0', 'limit=10001', 'limit=x', 'cursor=bm90LWFuLWlk']) {
      expect((await call(`${server.url}/api/discrepancies?${bad}`, { token: ALICE })).status, bad).toBe(400);
    }
  });

  it('serves /api/orders like report orders, paged by uuid', async () => {
    const rows = await json('/api/orders');
    expect(rows).toEqual([expect.objectContaining({ uuid: order, external_reference_id: 'Müller-4711', api_state: 'confirmed', webhook_state: 'authorized', deliveries: 1, open_discrepancies: 1 })]);
    const paged = await call(`${server.url}/api/orders?limit=1`, { token: ALICE });
    expect(paged.headers['next-cursor']).toBeUndefined();
    expect((await call(`${server.url}/api/orders?cursor=bm90LWEtdXVpZA`, { token: ALICE })).status).toBe(400);
    const csv = parseCsv((await call(`${server.url}/api/orders?format=csv`, { token: ALICE })).text);
    expect(csv).toHaveLength(2);
  });

  it('serves /api/payouts with amount and currency next to the cents, what the bank credited and the difference', async () => {
    const rows = await json('/api/payouts');
    expect(Object.keys(rows[0]!)).toEqual([...PAYOUT_COLUMNS]);
    const credited = rows.find((r) => r.sepa_reference === 'PO0000000000000042')!;
    expect(credited).toMatchObject({
      amount_cents: '12050', amount: '120.50', currency: 'EUR', status: 'complete', matched_bank_line: 'BANK-1 2026-03-04',
      invoice_references: 'INV-1;INV-2', credited_cents: '12000', credited_amount: '120.00', difference: '-0.50',
    });
    expect(rows.find((r) => r.sepa_reference === 'PO0000000000000044')).toMatchObject({ amount: '9.90', credited_cents: null, difference: null });
    const first = await call(`${server.url}/api/payouts?limit=1`, { token: ALICE });
    const second = await call(`${server.url}/api/payouts?limit=1&cursor=${String(first.headers['next-cursor'])}`, { token: ALICE });
    expect([...JSON.parse(first.text), ...JSON.parse(second.text)]).toEqual(rows);
    expect(second.headers['next-cursor']).toBeUndefined();
  });
});

describe('operator API: acknowledgement, evidence and overview', () => {
  it('records who acknowledged: the named token, never a name in the body; the shared token may name someone', async () => {
    const path = `${server.url}/api/discrepancies/${orderFindingId}/ack`;
    expect((await call(path, { method: 'POST', token: ALICE, body: '{}' })).status).toBe(400);
    expect((await call(path, { method: 'POST', token: ALICE, body: 'not json' })).status).toBe(400);
    expect((await call(`${server.url}/api/discrepancies/999999/ack`, { method: 'POST', token: ALICE, body: '{"note":"x"}' })).status).toBe(404);
    expect((await call(`${server.url}/api/discrepancies/abc/ack`, { method: 'POST', token: ALICE, body: '{"note":"x"}' })).status).toBe(404);
    const ack = await call(path, { method: 'POST', token: ALICE, body: JSON.stringify({ note: 'provider confirmed by phone', actor: 'mallory' }) });
    expect(ack.status).toBe(200);
    expect(JSON.parse(ack.text)).toMatchObject({ id: orderFindingId, status: 'acknowledged', note: 'provider confirmed by phone', acknowledgedBy: 'operator:alice' });
    // The shared token's named actor is recorded as claimed: never as a named token's identity.
    const sharedPath = `${server.url}/api/discrepancies/${hostileId}/ack`;
    const shared = await call(sharedPath, { method: 'POST', token: SHARED, body: JSON.stringify({ note: 'seen', actor: 'alice' }) });
    expect(JSON.parse(shared.text)).toMatchObject({ acknowledgedBy: 'operator:api (self-asserted: alice)' });
    const plain = await call(sharedPath, { method: 'POST', token: SHARED, body: JSON.stringify({ note: 'seen again' }) });
    expect(JSON.parse(plain.text)).toMatchObject({ acknowledgedBy: 'operator:api' });
    const sharedHistory = await database.sql<{ actor: string }[]>`select actor from discrepancy_history where discrepancy_id = ${hostileId} and to_status = 'acknowledged' order by id`;
    expect(sharedHistory.map((h) => h.actor)).toEqual(['operator:api (self-asserted: alice)', 'operator:api']);
    for (const actor of ['al\u0007ice', 'ada\nbob', '<img src=x>', 'ada\u202Eecila', 'x'.repeat(65), 7]) {
      const refused = await call(sharedPath, { method: 'POST', token: SHARED, body: JSON.stringify({ note: 'x', actor }) });
      expect(refused.status, String(actor)).toBe(400);
      expect(JSON.parse(refused.text).error).toMatch(/^actor /);
    }
    const history = await database.sql`select actor, reason from discrepancy_history where discrepancy_id = ${orderFindingId} and to_status = 'acknowledged'`;
    expect(history).toEqual([{ actor: 'operator:alice', reason: 'provider confirmed by phone' }]);
    const resolved = (await json('/api/discrepancies?status=resolved'))[0]!;
    expect((await call(`${server.url}/api/discrepancies/${String(resolved.id)}/ack`, { method: 'POST', token: ALICE, body: '{"note":"x"}' })).status).toBe(409);
    // The report carries who, when and the note.
    const row = (await json('/api/discrepancies?status=acknowledged')).find((r) => r.id === orderFindingId)!;
    expect(row).toMatchObject({ acknowledged_by: 'operator:alice', ack_note: 'provider confirmed by phone' });
    expect(row.acknowledged_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it('opens a finding\'s evidence: deliveries with raw bodies, polled state, bank lines, history with notes', async () => {
    const detail = await json<Record<string, any>>(`/api/discrepancies/${orderFindingId}`);
    expect(detail.discrepancy).toMatchObject({ id: orderFindingId, kind: 'missed_webhook', external_reference_id: 'Müller-4711' });
    expect(detail.deliveries).toHaveLength(1);
    expect(JSON.parse(detail.deliveries[0].raw_body)).toMatchObject({ topic: 'order/authorized', order_uuid: order });
    expect(detail.polled_state).toMatchObject({ state: 'confirmed', external_reference_id: 'Müller-4711' });
    expect(detail.history.map((h: { to_status: string; actor: string }) => [h.to_status, h.actor])).toEqual([['open', 'reconciler'], ['acknowledged', 'operator:alice']]);
    const payout = await json<Record<string, any>>(`/api/discrepancies/${mismatchId}`);
    expect(payout.bank_lines).toEqual([expect.objectContaining({ bank_reference: 'BANK-1', amount: '120.00', currency: 'EUR', sepa_reference: 'PO0000000000000042' })]);
    expect((await call(`${server.url}/api/discrepancies/999999`, { token: ALICE })).status).toBe(404);
  });

  it('gives the overview: open by kind and age, money at stake, open over time, payouts per week, freshness', async () => {
    const o = await json<Record<string, any>>('/api/overview');
    expect(o.environment).toBe('sandbox');
    const open = await json('/api/discrepancies');
    const byKind = Object.fromEntries(o.open_by_kind.map((k: { kind: string; open: number }) => [k.kind, k]));
    expect(byKind.missed_webhook).toMatchObject({ open: 6, today: 6 });
    expect(byKind.payout_not_on_statement).toMatchObject({ open: 1, older: 1, today: 0 });
    expect(o.open_by_kind.reduce((n: number, k: { open: number }) => n + k.open, 0)).toBe(open.length);
    expect(o.at_stake).toEqual(expect.arrayContaining([
      { kind: 'payout_amount_mismatch', currency: 'EUR', amount_cents: '50', amount: '0.50', findings: 1 },
      { kind: 'payout_not_on_statement', currency: 'EUR', amount_cents: '-700', amount: '-7.00', findings: 1 },
    ]));
    expect(o.open_over_time).toHaveLength(30);
    // Every change into 'open' adds one, every change out of it (cleared, or acknowledged above) removes one.
    const lastPoint = o.open_over_time.at(-1).open;
    expect(lastPoint).toBe(open.length);
    expect(o.payouts_by_week).toEqual([{ week: '2026-W10', matched: 0, unmatched: 2 }]);
    expect(o.freshness.last_poll).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(o.freshness.last_statement_import).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    // The last file was a CSV: no balances, so none could be checked.
    expect(o.freshness.last_statement_balances).toEqual({ statements: 1, balances_unchecked: 1, unbalanced: 0 });
  });
});
