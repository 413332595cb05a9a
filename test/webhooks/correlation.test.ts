import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import type { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { computeSignature } from '../../src/webhooks/signature.js';
import { createWebhookReceiver, type WebhookReceiver } from '../../src/webhooks/create-receiver.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { TEST_SECRET } from '../helpers/receiver.js';
import { testMetrics } from '../helpers/metrics.js';

/**
 * Every answer carries the delivery's correlation id (X-Request-Id, the stored delivery_uuid), and
 * one log line names it with the outcome and the latency: refusals at info, successes at debug.
 */
let db: TestDatabase;
let http: HttpServer;
let receiver: WebhookReceiver;
let registry: Registry;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  db = await createTestDatabase('correlation');
  const log = pino({ level: 'debug' }, new Writable({ write: (chunk, _e, done) => { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } }));
  const config = loadConfig({ WEBHOOK_SECRET: TEST_SECRET, PORT: '0' });
  const built = testMetrics(db);
  registry = built.registry;
  receiver = await createWebhookReceiver({ config, log, database: db, ...built });
  http = await startHttpServer({ host: '127.0.0.1', port: 0, routes: [receiver.route], log, name: 'test' });
});
afterAll(async () => {
  await http?.close();
  await receiver?.drain();
});

async function post(body: string, signature: string) {
  const r = await request(`${http.url}/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signature } });
  await r.body.text();
  return { status: r.statusCode, id: r.headers['x-request-id'] as string };
}

describe('delivery correlation ids', () => {
  it('names a stored delivery by its delivery_uuid, and logs each answer with outcome and latency', async () => {
    const body = JSON.stringify(samplePayload('order/confirmed'));
    const stored = await post(body, computeSignature(Buffer.from(body), TEST_SECRET));
    expect(stored.status).toBe(200);
    const [row] = await db.sql<{ delivery_uuid: string }[]>`select delivery_uuid::text from webhook_deliveries`;
    expect(stored.id).toBe(row?.delivery_uuid);
    const refused = await post(body, 'deadbeef');
    expect(refused.status).toBe(401);
    expect(refused.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(refused.id).not.toBe(stored.id);

    const answered = lines.filter((l) => l.msg === 'webhook answered');
    // A bad signature writes its own line only, not a second 'webhook answered'.
    expect(answered).toEqual([expect.objectContaining({ level: 20, delivery: stored.id, outcome: 'stored', status: 200, ms: expect.any(Number) })]);
    expect(lines.filter((l) => l.msg === 'webhook refused: bad or missing signature')).toEqual([expect.objectContaining({ delivery: refused.id })]);
  });

  it('a flood of bad signatures writes one line a minute; the metric counts every one', async () => {
    const body = JSON.stringify(samplePayload('order/confirmed'));
    const before = lines.length;
    for (let i = 0; i < 50; i++) expect((await post(body, `bad${i}`)).status).toBe(401);
    expect(lines.slice(before)).toEqual([]);
    const counted = (await registry.getSingleMetric('bnpl_recon_webhook_deliveries_total')!.get()).values.find((v) => v.labels.outcome === 'bad_signature');
    expect(counted?.value).toBe(51);
  });

  it('a flood from a source not allowed writes one line a minute, like bad signatures; the metric counts every one', async () => {
    const flooded: Record<string, unknown>[] = [];
    const log = pino({ level: 'debug' }, new Writable({ write: (chunk, _e, done) => { flooded.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } }));
    const config = loadConfig({ WEBHOOK_SECRET: TEST_SECRET, PORT: '0', WEBHOOK_ALLOWED_IPS: '192.0.2.1' });
    const built = testMetrics(db);
    const guarded = await createWebhookReceiver({ config, log, database: db, ...built });
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, routes: [guarded.route], log, name: 'test' });
    try {
      const body = JSON.stringify(samplePayload('order/confirmed'));
      for (let i = 0; i < 20; i++) {
        const r = await request(`${server.url}/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
        await r.body.text();
        expect(r.statusCode).toBe(403);
      }
      expect(flooded.filter((l) => l.msg === 'webhook answered')).toEqual([]);
      expect(flooded.filter((l) => l.msg === 'webhook refused: source address not allowed')).toHaveLength(1);
      const counted = (await built.registry.getSingleMetric('bnpl_recon_webhook_deliveries_total')!.get()).values.find((v) => v.labels.outcome === 'forbidden_source');
      expect(counted?.value).toBe(20);
    } finally {
      await server.close();
      await guarded.drain();
    }
  });
});
