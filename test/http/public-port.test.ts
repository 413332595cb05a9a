import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { startDaemon, type Daemon } from '../../src/daemon/daemon.js';
import { healthRoutes } from '../../src/http/health.js';
import { startHttpServer } from '../../src/http/server.js';
import { SIGN_IN_MAX_FAILURES } from '../../src/http/sign-in.js';
import { rateLimitedLog } from '../../src/log/rate-limited.js';
import { exchange } from '../e2e/raw-http.js';
import { RARE_CRON } from '../e2e/harness.js';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/database.js';

/**
 * What the public port (PORT) tells and refuses, against a running daemon on a real Postgres:
 * caching and sniffing headers, Allow on 405, HEAD as GET without the body, request targets that are not plain paths, NUL in a
 * filter or a note, failed sign-ins (counted, logged at a limited rate, throttled per address),
 * and /readyz without the database's error text.
 */

interface Line { msg: string; [key: string]: unknown }
const TOKEN = randomBytes(24).toString('hex');
let db: TestDatabase;
let dataDir: string;
let daemon: Daemon;
const lines: Line[] = [];

beforeAll(async () => {
  db = await createTestDatabase('public_port');
  dataDir = await mkdtemp(path.join(tmpdir(), 'bnpl-public-port-'));
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  daemon = await startDaemon(
    loadConfig({
      DATABASE_URL: db.url, RECON_DATA_DIR: dataDir, PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', PROVIDER_ENV: 'sandbox',
      WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('hex')}`, OPERATOR_TOKEN: TOKEN, POLL_SCHEDULE: RARE_CRON, RECONCILE_SCHEDULE: RARE_CRON,
      // The test's requests come from 127.0.0.1: believing its X-Forwarded-For lets each test be its own address.
      TRUSTED_PROXIES: '127.0.0.1', DB_POOL_MAX: '4',
    }),
    log,
  );
});
afterAll(async () => {
  await daemon?.stop('test');
  await rm(dataDir, { recursive: true, force: true });
});

async function call(target: string, options: { method?: 'GET' | 'POST' | 'HEAD'; token?: string; from?: string; body?: string } = {}) {
  const res = await request(`${daemon.url}${target}`, {
    method: options.method ?? 'GET',
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.from ? { 'x-forwarded-for': options.from } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

describe('the public port', () => {
  it('answers with Cache-Control: no-store and nosniff (the page revalidates instead), and 405 with Allow', async () => {
    for (const target of ['/api/discrepancies', '/api/discrepancies?format=csv', '/api/session']) {
      const answer = await call(target, { token: TOKEN });
      expect(answer.status, target).toBe(200);
      expect(answer.headers['cache-control'], target).toBe('no-store');
      expect(answer.headers['x-content-type-options'], target).toBe('nosniff');
    }
    const refused = await call('/api/discrepancies', { from: '198.51.100.1' });
    expect([refused.status, refused.headers['cache-control'], refused.headers['x-content-type-options']]).toEqual([401, 'no-store', 'nosniff']);
    const page = await call('/');
    expect([page.status, page.headers['cache-control'], page.headers['x-content-type-options']]).toEqual([200, 'no-cache', 'nosniff']);
    const readyz = await call('/readyz', { method: 'POST' });
    expect([readyz.status, readyz.headers.allow]).toEqual([405, 'GET, HEAD']);
    // HEAD is GET without the body (RFC 9110): what an uptime monitor probes with.
    for (const [target, token] of [['/readyz', undefined], ['/api/discrepancies?format=csv', TOKEN]] as const) {
      const [get, head] = [await call(target, { token }), await call(target, { token, method: 'HEAD' })];
      expect([head.status, head.headers['content-type'], head.text], target).toEqual([get.status, get.headers['content-type'], '']);
      expect(get.text.length, target).toBeGreaterThan(0);
    }
    const webhooks = await call('/webhooks');
    expect([webhooks.status, webhooks.headers.allow]).toEqual([405, 'POST']);
    expect((await call('/nowhere')).headers.allow).toBeUndefined();
  });

  it('refuses request targets that are not a plain path, instead of routing the path they carry', async () => {
    const raw = async (target: string) => {
      const head = `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`;
      const result = await exchange(new URL(daemon.url).port as unknown as number, { chunks: [Buffer.from(head)], gapMs: 0, then: 'wait', limitMs: 5000 });
      return { status: result.responses[0]?.status, body: result.responses[0]?.body.toString('utf8') ?? '' };
    };
    expect((await raw('/api/session')).status).toBe(200);
    for (const target of ['//evil.example/api/session', 'http://evil.example/api/session', '/healthz/../api/session', '/webhooks/%2e%2e/api/session', '/healthz\\..\\api\\session']) {
      const answer = await raw(target);
      expect(answer.status, target).toBe(400);
      expect(answer.body, target).toMatch(/request target must/);
    }
  });

  it('refuses a NUL in a filter or a note with 400 naming it, never a 500', async () => {
    const before = lines.length;
    const search = await call('/api/discrepancies?q=PO%00X', { token: TOKEN });
    expect(search.status).toBe(400);
    expect(JSON.parse(search.text).error).toBe('parameter q must not contain a NUL character');
    const kind = await call('/api/discrepancies?kind=%00', { token: TOKEN });
    expect(JSON.parse(kind.text).error).toMatch(/^parameter kind /);
    const note = await call('/api/discrepancies/1/ack', { method: 'POST', token: TOKEN, body: JSON.stringify({ note: 'seen\u0000' }) });
    expect([note.status, JSON.parse(note.text).error]).toEqual([400, 'note must not contain a NUL character or an unpaired UTF-16 surrogate, which Postgres cannot store']);
    expect(lines.slice(before).filter((l) => l.msg.startsWith('request failed'))).toEqual([]);
  });

  it('counts failed sign-ins, logs them at a limited rate, and throttles the address that sent too many', async () => {
    const before = lines.length;
    const attacker = '203.0.113.7';
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) expect((await call('/api/session', { token: `wrong-${i}`, from: attacker })).status).toBe(401);
    const throttled = await call('/api/session', { token: 'wrong-again', from: attacker });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    // Even the right token, from that address, until its window ends; another address is not affected.
    expect((await call('/api/session', { token: TOKEN, from: attacker })).status).toBe(429);
    expect((await call('/api/session', { token: TOKEN, from: '203.0.113.8' })).status).toBe(200);
    expect((await call('/api/session', { from: '203.0.113.9' })).status).toBe(401);

    const scrape = await (await request(daemon.metricsUrl)).body.text();
    const count = (reason: string) => Number(new RegExp(`^bnpl_recon_operator_sign_in_failures_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(scrape)?.[1]);
    expect(count('wrong_token')).toBe(SIGN_IN_MAX_FAILURES);
    expect(count('throttled')).toBe(2);
    expect(count('missing_token')).toBeGreaterThanOrEqual(1);
    const logged = lines.slice(before).filter((l) => l.msg === 'operator sign-in refused' && l.reason !== 'missing_token');
    expect(logged).toEqual([expect.objectContaining({ reason: 'wrong_token', source: attacker }), expect.objectContaining({ reason: 'throttled', source: attacker })]);
    expect(JSON.stringify(logged)).not.toContain('wrong-0');
  });

  // After the test above, whose counts it would change.
  it('throttles an IPv6 sender by its /64, and a sender whose proxy appended its port by its address', async () => {
    // Ten wrong tokens, each from another address of one /64: the eleventh address of it is refused.
    for (let i = 1; i <= SIGN_IN_MAX_FAILURES; i++) expect((await call('/api/session', { token: `wrong-${i}`, from: `2001:db8:1:2::${i.toString(16)}` })).status).toBe(401);
    expect((await call('/api/session', { token: TOKEN, from: '2001:db8:1:2:ffff:ffff:ffff:ffff' })).status).toBe(429);
    expect((await call('/api/session', { token: TOKEN, from: '[2001:db8:1:2::abc]:443' })).status).toBe(429);
    expect((await call('/api/session', { token: TOKEN, from: '2001:db8:1:3::1' })).status).toBe(200);
    // A new source port each time is the same sender.
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) expect((await call('/api/session', { token: `wrong-${i}`, from: `198.51.100.20:${40000 + i}` })).status).toBe(401);
    expect((await call('/api/session', { token: TOKEN, from: '198.51.100.20' })).status).toBe(429);
    expect((await call('/api/session', { token: TOKEN, from: '198.51.100.21:40000' })).status).toBe(200);
  });
});

describe('readiness on the public port', () => {
  it('says "database unreachable" without the database\'s error text, which goes to the log', async () => {
    const role = `t_nologin_${randomBytes(3).toString('hex')}`;
    await db.sql.unsafe(`create role ${role} nologin`);
    const url = new URL(serverUrl());
    url.username = role;
    url.pathname = `/${db.name}`;
    const refused = databaseOver(createSqlClient(url.toString(), { poolMax: 1 }));
    const logs: Line[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void logs.push(JSON.parse(s) as Line) });
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'test', routes: healthRoutes(refused, { isStopping: () => false, hasSigningSecret: () => true, log }) });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await request(`${server.url}/readyz`);
        expect(res.statusCode).toBe(503);
        const body = await res.body.text();
        expect(JSON.parse(body)).toEqual({ status: 'database unreachable' });
        expect(body).not.toContain(role);
      }
      const detail = logs.filter((l) => l.msg === 'readiness: database unreachable');
      expect(detail).toHaveLength(1);
      expect(String(detail[0]!.err)).toContain(role);
    } finally {
      await server.close();
      await refused.close();
      await db.sql.unsafe(`drop role ${role}`);
    }
  });
});

describe('rate-limited log lines', () => {
  it('writes one line per interval and reports how many were held back on the next', () => {
    const logs: Line[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void logs.push(JSON.parse(s) as Line) });
    let now = 0;
    const line = rateLimitedLog(log, 'warn', 'flood', 60_000, () => now);
    for (let i = 0; i < 100; i++) line({ i });
    now = 60_000;
    line({ i: 100 });
    line({ i: 101 });
    expect(logs.map((l) => [l.msg, l.i, l.suppressed])).toEqual([['flood', 0, undefined], ['flood', 100, 99]]);
  });
});
