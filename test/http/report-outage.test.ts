import { get } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { LEDGER_DEADLINE_MS } from '../../src/http/operator-request.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startProxy, type Proxy } from '../helpers/tcp-proxy.js';

/**
 * A report that cannot be read whole must not look whole: 503 when the ledger fails before the
 * answer begins, and a connection cut without the closing chunk when it fails midway.
 */
const TOKEN = 'operator-86422bcec73620ec02888ae2aff4356a';

async function operatorServer(database: Database): Promise<HttpServer> {
  const log = silentLogger();
  return startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'test', routes: operatorRoutes({ config: loadConfig({ OPERATOR_TOKEN: TOKEN }), database, log }) });
}

describe('reports with the ledger down', () => {
  let database: Database;
  let server: HttpServer;

  beforeAll(async () => {
    const probe = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const sql = createSqlClient(`postgres://postgres@127.0.0.1:${port}/ledger`, { poolMax: 2 });
    database = databaseOver(sql, { closeTimeoutSeconds: 1 });
    server = await operatorServer(database);
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  for (const path of ['/api/discrepancies', '/api/discrepancies?format=csv', '/api/discrepancies?limit=10', '/api/discrepancies?format=xlsx', '/api/orders', '/api/payouts?format=csv']) {
    it(`answers 503 to ${path}`, async () => {
      const response = await request(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const text = await response.body.text();
      expect(response.statusCode, text).toBe(503);
      expect(JSON.parse(text)).toEqual({ error: 'database unavailable; retry' });
    });
  }
});

describe('a report whose ledger fails midway', () => {
  const ROWS = 60_000;
  let database: TestDatabase;
  let server: HttpServer;

  beforeAll(async () => {
    database = await createTestDatabase('report_outage', { poolMax: 2 });
    await database.sql`
      insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, expected, observed, details, evidence_hash)
      select 'sandbox', 'duplicate_delivery', 'open', 'webhook_delivery', g::text, '', '1', g::text, 'Delivery ' || g || ' ' || repeat('x', 250), md5(g::text)
      from generate_series(1, ${ROWS}) g`;
    server = await operatorServer(database);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('cuts the connection without the closing chunk, so the client sees it incomplete', async () => {
    const outcome = await new Promise<{ status: number; complete: boolean; bytes: number; tail: string; errored: boolean }>((resolve, reject) => {
      const req = get(`${server.url}/api/discrepancies?status=all`, { headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
        let bytes = 0;
        let tail = '';
        let errored = false;
        let paused = false;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          tail = (tail + chunk.toString('utf8')).slice(-16);
          if (paused) return;
          paused = true;
          // Stop reading so the server is mid-report, then take its database session away.
          res.pause();
          const killer = createSqlClient(database.url, { poolMax: 1 });
          killer`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`
            .then(() => killer.end({ timeout: 2 }))
            .then(() => res.resume(), reject);
        });
        res.on('error', () => (errored = true));
        res.on('close', () => resolve({ status: res.statusCode ?? 0, complete: res.complete, bytes, tail, errored }));
      });
      req.on('error', reject);
    });
    expect(outcome.status).toBe(200);
    expect(outcome.bytes).toBeGreaterThan(0);
    // The whole report is ~18 MB: the server was cut off before its end, and said so by not ending.
    expect(outcome.bytes).toBeLessThan(ROWS * 250);
    expect(outcome.complete).toBe(false);
    expect(outcome.tail.endsWith('\n]\n')).toBe(false);

    // The same through undici: reading the body fails instead of returning a short report.
    const again = await request(`${server.url}/api/discrepancies?status=all&format=csv`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(again.statusCode).toBe(200);
    const killer = createSqlClient(database.url, { poolMax: 1 });
    const [first] = await Promise.all([
      again.body.text().then(() => 'read whole', (error: Error) => `failed: ${error.message}`),
      new Promise((r) => setTimeout(r, 20)).then(() => killer`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`),
    ]);
    await killer.end({ timeout: 2 });
    expect(first).toMatch(/^failed/);
  });
});

describe('operator API while the database stops answering without closing its connections (frozen primary, partition)', () => {
  // http-api.md: 503 "when the ledger cannot be read before the answer begins, or does not answer within 15 s".
  let proxy: Proxy;
  let viaProxy: Database;
  let server: HttpServer;
  let test: TestDatabase;

  beforeAll(async () => {
    test = await createTestDatabase('report_frozen_ledger');
    proxy = await startProxy(new URL(test.url));
    viaProxy = databaseOver(createSqlClient(proxy.url, { poolMax: 2 }), { closeTimeoutSeconds: 0 });
    server = await operatorServer(viaProxy);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
    await viaProxy?.close(0).catch(() => undefined);
  });

  async function answerWithin(path: string, ms: number): Promise<{ status: number | 'no answer'; body: string }> {
    try {
      const response = await request(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(ms) });
      return { status: response.statusCode, body: await response.body.text() };
    } catch {
      return { status: 'no answer', body: '' };
    }
  }

  it('answers /api/overview and a streamed report 503 at the ledger deadline instead of hanging', { timeout: 60_000 }, async () => {
    // Healthy first: the pool holds its connections.
    expect((await answerWithin('/api/overview', 10_000)).status).toBe(200);
    expect((await answerWithin('/api/discrepancies?limit=5', 10_000)).status).toBe(200);
    proxy.freeze();
    const started = Date.now();
    const [overview, report] = await Promise.all([answerWithin('/api/overview', 20_000), answerWithin('/api/discrepancies?format=csv', 20_000)]);
    const seconds = (Date.now() - started) / 1000;
    expect({ overview, report }).toEqual({
      overview: { status: 503, body: '{"error":"database unavailable; retry"}' },
      report: { status: 503, body: '{"error":"database unavailable; retry"}' },
    });
    // Answered by the deadline at the latest; earlier when a read cannot even begin (its transaction
    // waits for a connection the frozen server never gives: postgres.js's connect timeout, 2 s).
    expect(seconds).toBeLessThanOrEqual(LEDGER_DEADLINE_MS / 1000 + 2);
  });
});
