import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { startSimulator, type Simulator } from '../../sim/simulator.js';
import { DAY_MS, HOUR_MS } from '../../sim/time.js';
import { getJson, listAllOrders } from './helpers.js';

let sim: Simulator;
let fakeNow = 0;

beforeAll(async () => {
  // The rate limiter reads a clock the test controls, so "more than 500 in one second" is exact.
  sim = await startSimulator({ seed: 'api', rateLimitNow: () => fakeNow, business: { ordersPerDay: 400 } });
  await sim.advance(DAY_MS);
});
afterAll(async () => {
  await sim.stop();
});

describe('authentication and errors', () => {
  it('answers 401 in the spec error shape for a missing or unknown key', async () => {
    const { request } = await import('undici');
    const missing = await request(`${sim.url}/api/v1/orders`);
    expect(missing.statusCode).toBe(401);
    expect(await missing.body.json()).toEqual({ status: 401, errors: [{ name: 'Api-Token', details: 'is missing' }] });
    const wrong = await request(`${sim.url}/webhooks/keys`, { headers: { 'api-token': 'nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(((await wrong.body.json()) as { status: number }).status).toBe(401);
  });

  it('answers 422 with dot-notation names for bad paging and bad registrations', async () => {
    const paging = await getJson(sim, '/api/v1/orders?page=abc&per_page=0');
    expect(paging.status).toBe(422);
    expect(paging.body).toEqual({
      status: 422,
      errors: [
        { name: 'page', details: 'must be an integer' },
        { name: 'per_page', details: 'must be greater than 0' },
      ],
    });
    const { request } = await import('undici');
    const res = await request(`${sim.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'api-token': sim.apiKeys.sandbox, 'content-type': 'application/json' },
      body: JSON.stringify({ topic: '', address: 'ftp://x' }),
    });
    expect(res.statusCode).toBe(422);
    const body = (await res.body.json()) as { status: number; errors: { name: string }[] };
    expect(body.status).toBe(422);
    expect(body.errors.map((e) => e.name).sort()).toEqual(['address', 'topic']);
  });

  it('registers per environment and serves each environment its own secret', async () => {
    const { request } = await import('undici');
    const post = (env: 'sandbox' | 'production') =>
      request(`${sim.url}/webhooks`, {
        method: 'POST',
        headers: { 'api-token': sim.apiKeys[env], 'content-type': 'application/json' },
        body: JSON.stringify({ topic: 'order/confirmed', address: 'http://127.0.0.1:9/hook' }),
      });
    const first = await post('sandbox');
    expect(first.statusCode).toBe(201);
    expect(((await first.body.json()) as { webhook: { topic: string } }).webhook.topic).toBe('order/confirmed');
    const again = await post('sandbox');
    expect(again.statusCode).toBe(200);
    await again.body.dump();
    expect(sim.registrations('sandbox')).toHaveLength(1);
    expect(sim.registrations('production')).toHaveLength(0);
    const sandboxKeys = await getJson(sim, '/webhooks/keys', 'sandbox');
    const productionKeys = await getJson(sim, '/api/v1/webhooks/keys', 'production');
    expect(sandboxKeys.body).toEqual({ webhook_secret: sim.secrets.sandbox });
    expect(productionKeys.body).toEqual({ webhook_secret: sim.secrets.production });
    expect(sim.secrets.sandbox).not.toBe(sim.secrets.production);
  });
});

describe('GET /api/v1/orders paging', () => {
  it('pages newest first, caps per_page, and the environments share no order', async () => {
    const sandbox = await listAllOrders(sim, 'sandbox');
    const production = await listAllOrders(sim, 'production');
    expect(sandbox.length).toBeGreaterThan(250);
    const refs = sandbox.map((o) => Number(o.external_reference_id.slice(4)));
    expect(refs).toEqual([...refs].sort((a, b) => b - a));
    expect(new Set(sandbox.map((o) => o.uuid)).size).toBe(sandbox.length);
    const productionIds = new Set(production.map((o) => o.uuid));
    expect(sandbox.some((o) => productionIds.has(o.uuid))).toBe(false);
    const capped = await getJson(sim, '/api/v1/orders?page=1&per_page=1000');
    expect(capped.body.orders).toHaveLength(100);
    const beyond = await getJson(sim, '/api/v1/orders?page=1000&per_page=100');
    expect(beyond.body).toEqual({ orders: [] });
  });

  it('misses no order that existed when a scan began, while orders are created during the scan', async () => {
    const before = await listAllOrders(sim, 'sandbox');
    const seen: { uuid: string; external_reference_id: string }[] = [];
    const ref = (o: { external_reference_id: string }) => Number(o.external_reference_id.slice(4));
    const perPage = 20;
    let repeats = 0;
    for (let page = 1; page < 1000; page++) {
      const { body } = await getJson(sim, `/api/v1/orders?page=${page}&per_page=${perPage}`);
      const orders: { uuid: string; external_reference_id: string }[] = body.orders;
      // Within a page, newest first.
      for (let i = 1; i < orders.length; i++) expect(ref(orders[i]!)).toBeLessThan(ref(orders[i - 1]!));
      // Inserts at the head only push already-seen orders onto later pages; nothing new appears out of order.
      const seenIds = new Set(seen.map((o) => o.uuid));
      const last = seen[seen.length - 1];
      for (const o of orders) {
        if (seenIds.has(o.uuid)) repeats += 1;
        else if (last) expect(ref(o)).toBeLessThan(ref(last));
      }
      seen.push(...orders.filter((o) => !seenIds.has(o.uuid)));
      if (orders.length < perPage) break;
      await sim.advance(HOUR_MS); // ~17 new orders shift the later pages
    }
    const seenIds = new Set(seen.map((o) => o.uuid));
    for (const o of before) expect(seenIds.has(o.uuid)).toBe(true);
    expect(repeats).toBeGreaterThan(0);
    expect(seen.length).toBe(before.length);
  });
});

describe('rate limit', () => {
  async function burst(pool: Pool, count: number, env: 'sandbox' | 'production') {
    const statuses: number[] = [];
    let retryAfter: unknown;
    for (let i = 0; i < count; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, count - i) }, () =>
          pool.request({ path: '/api/v1/orders?per_page=1', method: 'GET', headers: { 'api-token': sim.apiKeys[env] } }).then(async (r) => {
            await r.body.dump();
            if (r.statusCode === 429) retryAfter = r.headers['retry-after'];
            return r.statusCode;
          }),
        ),
      );
      statuses.push(...batch);
    }
    return { ok: statuses.filter((s) => s === 200).length, limited: statuses.filter((s) => s === 429).length, retryAfter };
  }

  it('serves 500 requests in one second per environment and answers 429 with Retry-After beyond', async () => {
    const pool = new Pool(sim.url, { connections: 8 });
    try {
      fakeNow = 10_000;
      expect(await burst(pool, 500, 'sandbox')).toMatchObject({ ok: 500, limited: 0 });
      expect(await burst(pool, 500, 'production')).toMatchObject({ ok: 500, limited: 0 });
      const over = await burst(pool, 20, 'sandbox');
      expect(over).toMatchObject({ ok: 0, limited: 20, retryAfter: '1' });
      fakeNow += 1000;
      expect(await burst(pool, 500, 'sandbox')).toMatchObject({ ok: 500, limited: 0 });
    } finally {
      await pool.close();
    }
  });
});
