import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { call, TOKEN } from './operator-harness.js';

/**
 * http-api.md: "Bad filters are 400 with the reason"; a 503 says "database unavailable; retry". A
 * request that can never succeed must be told so whatever the ledger's state: its parameters are
 * checked before the ledger is reached (GuardedRoute.parse, operator-request.ts). When every read's
 * handler, its checks included, ran inside its transaction (ledger-read.ts), a bad filter sent while
 * the ledger was down was answered 503 "retry", and while it hung, only at the deadline.
 * The ledger here is a port nobody listens on: every connection is refused.
 */
let database: Database;
let server: HttpServer;
const logLines: { level: number; msg: string; [k: string]: unknown }[] = [];

beforeAll(async () => {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  database = databaseOver(createSqlClient(`postgres://postgres@127.0.0.1:${port}/ledger`, { poolMax: 2 }), { closeTimeoutSeconds: 1 });
  const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(JSON.parse(s) as (typeof logLines)[number]) });
  const config = loadConfig({ OPERATOR_TOKENS: `alice:${TOKEN}`, PROVIDER_ENV: 'sandbox' });
  server = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'operator', routes: operatorRoutes({ config, database, log }) });
});
afterAll(async () => {
  await server?.close();
  await database?.close();
});

describe('a bad request while the ledger is down', () => {
  const cursorOf = (key: string) => Buffer.from(key, 'utf8').toString('base64url');
  // Each route's own filters, then the parameters every report takes.
  const bad: [path: string, named: RegExp][] = [
    ['/api/discrepancies?status=bogus', /status must be one of/],
    ['/api/discrepancies?since=yesterday', /since must be an ISO 8601 date/],
    ['/api/discrepancies?kind=no_such_kind', /unknown kind 'no_such_kind'/],
    [`/api/discrepancies?q=${'x'.repeat(201)}`, /search must be at most 200 characters/],
    ['/api/deliveries?status=bogus', /status must be one of/],
    ['/api/invoices?ageing=maybe', /ageing must be true or false/],
    ['/api/orders?format=pdf', /format must be json, csv or xlsx/],
    ['/api/payouts?limit=0', /limit must be an integer/],
    ['/api/invoices?ageing=1&format=csv&delimiter=x', /delimiter must be/],
    ['/api/orders?format=csv&bom=maybe', /bom must be true or false/],
    [`/api/discrepancies?cursor=${cursorOf('not-an-id')}`, /is not one this report gave/],
    // A valid cursor of another report: an id is no invoice's uuid.
    [`/api/invoices?cursor=${cursorOf('42')}`, /is not one this report gave/],
  ];
  for (const [path, named] of bad) {
    it(`answers ${path.slice(0, 60)} with 400 naming the parameter, not 503 "retry", and logs the refusal`, async () => {
      const started = performance.now();
      const answer = await call(`${server.url}${path}`);
      expect({ status: answer.status, text: answer.text }).toMatchObject({ status: 400, text: expect.stringMatching(named) as unknown });
      // Refused before any connection is tried (postgres.js's connect_timeout is 2 s).
      expect(performance.now() - started).toBeLessThan(1000);
      expect(logLines.filter((l) => l.msg === 'operator request refused' && l.path === new URL(path, 'http://x').pathname && named.test(String(l.err)))).not.toEqual([]);
    });
  }

  it('still answers a good request 503 "retry" (the ledger is down)', async () => {
    const answer = await call(`${server.url}/api/discrepancies?status=open`);
    expect({ status: answer.status, text: answer.text }).toEqual({ status: 503, text: '{"error":"database unavailable; retry"}' });
  });

  it('answers an acknowledgement with a bad body 400 (its body is checked before its own transaction)', async () => {
    const answer = await call(`${server.url}/api/discrepancies/1/ack`, { method: 'POST', body: JSON.stringify({ note: '' }) });
    expect({ status: answer.status, text: answer.text }).toEqual({ status: 400, text: '{"error":"note is required"}' });
  });

  it('answers an upload sent as a form 415 (refused before its import reaches the ledger)', async () => {
    const answer = await call(`${server.url}/api/statements?name=a.csv`, { method: 'POST', body: 'a=1', contentType: 'application/x-www-form-urlencoded' });
    expect(answer.status, answer.text).toBe(415);
  });
});
