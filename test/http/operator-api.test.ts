import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load.js';
import { healthRoutes } from '../../src/http/health.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const TOKEN = 'operator-token-0123456789';
let database: TestDatabase;
let server: HttpServer;
let disabled: HttpServer;
let passed = false;

async function call(url: string, options: { method?: 'GET' | 'POST'; token?: string; body?: string } = {}) {
  const response = await request(url, {
    method: options.method ?? 'GET',
    headers: { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), 'content-type': 'application/json' },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  return { status: response.statusCode, type: String(response.headers['content-type']), text: await response.body.text() };
}

beforeAll(async () => {
  database = await createTestDatabase('operator_api');
  const log = silentLogger();
  const config = loadConfig({ OPERATOR_TOKEN: TOKEN });
  server = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'test', routes: [...healthRoutes(database, { isStopping: () => false, hasSigningSecret: () => true }), ...operatorRoutes({ config, database, log })] });
  disabled = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'test', routes: operatorRoutes({ config: loadConfig({}), database, log }) });
  await database.sql`
    insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, external_reference_id, expected, observed, details)
    values ('sandbox', 'missed_webhook', 'open', 'order', '6f1c2a9e-8d44-4b1e-9a0e-3b1f2c3d4e51', 'confirmed', 'ORD-1, "quoted"', 'confirmed', null,
            'The API shows the order confirmed; no order/confirmed webhook arrived.'),
           ('production', 'orphan_webhook', 'open', 'order', '7f1c2a9e-8d44-4b1e-9a0e-3b1f2c3d4e51', '', 'ORD-2', null, null, 'No such order.')`;
});
afterAll(async () => {
  await server?.close();
  await disabled?.close();
  if (passed) await database?.drop();
  else await database?.close();
});

describe('operator API', () => {
  it('refuses without the bearer token, and everything when no token is configured', async () => {
    expect((await call(`${server.url}/api/discrepancies`)).status).toBe(401);
    expect((await call(`${server.url}/api/discrepancies`, { token: 'wrong-token-xxxxxxxxxx' })).status).toBe(401);
    expect((await call(`${disabled.url}/api/discrepancies`, { token: TOKEN })).status).toBe(403);
    expect((await call(`${server.url}/api/nothing`, { token: TOKEN })).status).toBe(404);
  });

  it('serves the discrepancy report as RFC 4180 CSV and as JSON with the filters of the CLI', async () => {
    const csv = await call(`${server.url}/api/discrepancies?format=csv&env=sandbox`, { token: TOKEN });
    expect(csv.status).toBe(200);
    expect(csv.type).toContain('text/csv');
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,kind,status,environment,entity_type,entity_id,external_reference_id,sepa_reference,expected,observed,details,first_detected_at,last_checked_at,resolved_at');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('"ORD-1, ""quoted"""');
    const json = await call(`${server.url}/api/discrepancies?format=json&kind=orphan_webhook`, { token: TOKEN });
    const rows = JSON.parse(json.text) as { kind: string; environment: string }[];
    expect(rows.map((r) => [r.kind, r.environment])).toEqual([['orphan_webhook', 'production']]);
    expect((await call(`${server.url}/api/discrepancies?format=xml`, { token: TOKEN })).status).toBe(400);
    expect((await call(`${server.url}/api/discrepancies?kind=nonsense`, { token: TOKEN })).status).toBe(400);
  });

  it('acknowledges with a note, keeps history, and answers 404 and 400 for bad requests', async () => {
    const [row] = await database.sql<{ id: string }[]>`select id::text from discrepancies where kind = 'missed_webhook'`;
    const id = Number(row?.id);
    expect((await call(`${server.url}/api/discrepancies/${id}/ack`, { method: 'POST', token: TOKEN, body: '{}' })).status).toBe(400);
    expect((await call(`${server.url}/api/discrepancies/${id}/ack`, { method: 'POST', token: TOKEN, body: 'not json' })).status).toBe(400);
    expect((await call(`${server.url}/api/discrepancies/999999/ack`, { method: 'POST', token: TOKEN, body: '{"note":"x"}' })).status).toBe(404);
    const ack = await call(`${server.url}/api/discrepancies/${id}/ack`, { method: 'POST', token: TOKEN, body: JSON.stringify({ note: 'provider confirmed by phone', actor: 'ada' }) });
    expect(ack.status).toBe(200);
    expect(JSON.parse(ack.text)).toMatchObject({ id, status: 'acknowledged', note: 'provider confirmed by phone', acknowledgedBy: 'operator:ada' });
    const [after] = await database.sql`select status, ack_note from discrepancies where id = ${id}`;
    expect(after).toMatchObject({ status: 'acknowledged', ack_note: 'provider confirmed by phone' });
    const history = await database.sql`select to_status, actor, reason from discrepancy_history where discrepancy_id = ${id}`;
    expect(history).toContainEqual({ to_status: 'acknowledged', actor: 'operator:ada', reason: 'provider confirmed by phone' });
    const open = await call(`${server.url}/api/discrepancies?format=json&env=sandbox`, { token: TOKEN });
    expect(JSON.parse(open.text)).toEqual([]);
  });

  it('reports readiness from the database and the migrations', async () => {
    expect((await call(`${server.url}/healthz`)).status).toBe(200);
    const ready = await call(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    await database.sql`delete from drizzle.__drizzle_migrations where id = (select max(id) from drizzle.__drizzle_migrations)`;
    expect((await call(`${server.url}/readyz`)).status).toBe(503);
    passed = true;
  });
});
