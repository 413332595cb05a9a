import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/simulator.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../sim/time.js';
import { ALL_BARE_TOPICS, startReceiver } from './helpers.js';

const run = promisify(execFile);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function sim(options: Parameters<typeof startSimulator>[0]): Promise<Simulator> {
  const s = await startSimulator(options);
  cleanups.push(() => s.stop());
  return s;
}

/** The independent check the spec describes: openssl's HMAC over the raw body bytes, hex. */
async function opensslHmac(body: Buffer, key: string): Promise<string> {
  const child = execFile('openssl', ['dgst', '-sha256', '-hmac', key]);
  const out = new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (d: Buffer) => (text += d.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(text));
  });
  child.stdin?.end(body);
  const text = await out;
  return text.trim().split(/\s+/).pop() ?? '';
}

describe('signed deliveries', () => {
  it('signs every delivery so that openssl verifies it with the environment secret', async () => {
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const s = await sim({ seed: 'sig', signatureHeader: 'X-Acme-Signature' });
    for (const topic of ALL_BARE_TOPICS) s.register('sandbox', topic, receiver.url);
    await s.advance(DAY_MS / 2);
    await s.drain();
    expect(receiver.received.length).toBeGreaterThan(20);
    const sample = receiver.received.filter((_, i) => i % 5 === 0).slice(0, 12);
    for (const r of sample) {
      const header = r.headers['x-acme-signature'];
      expect(header).toMatch(/^[0-9a-f]{64}$/);
      expect(await opensslHmac(r.body, s.secrets.sandbox)).toBe(header);
      expect(r.headers['content-type']).toBe('application/json');
    }
    // And a body with unusual bytes (umlauts in names) still verifies byte for byte.
    const withUmlaut = receiver.received.find((r) => /[äöüß]/.test(r.body.toString('utf8')));
    if (withUmlaut) expect(await opensslHmac(withUmlaut.body, s.secrets.sandbox)).toBe(withUmlaut.headers['x-acme-signature']);
    await run('openssl', ['version']);
  });

  it('delivers only what a subscription covers: bare topic versus topic/subtopic', async () => {
    const bare = await startReceiver();
    const sub = await startReceiver();
    const prod = await startReceiver();
    cleanups.push(bare.close, sub.close, prod.close);
    const s = await sim({ seed: 'subs' });
    s.register('sandbox', 'order', bare.url);
    s.register('sandbox', 'order/confirmed', sub.url);
    s.register('production', 'invoice', prod.url);
    await s.advance(2 * DAY_MS);
    await s.drain();
    const topics = (list: typeof bare.received) => new Set(list.map((r) => JSON.parse(r.body.toString()).topic as string));
    expect([...topics(bare.received)].every((t) => t.startsWith('order/'))).toBe(true);
    expect(topics(bare.received).size).toBeGreaterThan(2);
    expect([...topics(sub.received)]).toEqual(['order/confirmed']);
    expect(prod.received.length).toBeGreaterThan(0);
    expect([...topics(prod.received)].every((t) => t.startsWith('invoice/'))).toBe(true);
    const { createHmac } = await import('node:crypto');
    for (const r of prod.received) {
      expect(r.headers['x-service-signature']).toBe(createHmac('sha256', s.secrets.production).update(r.body).digest('hex'));
    }
  });
});

describe('retries', () => {
  it('retries a failing delivery with exponential backoff in simulated time until a 2xx', async () => {
    const seen = new Map<string, number>();
    // 500 for the first two attempts of each body, then 200.
    const receiver = await startReceiver((r) => {
      const key = createHash('sha256').update(r.body).digest('hex');
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      return n <= 2 ? 500 : 200;
    });
    cleanups.push(receiver.close);
    const s = await sim({ seed: 'retry', retryBaseMs: MINUTE_MS });
    s.register('sandbox', 'order', receiver.url);
    await s.advance(6 * HOUR_MS);
    await s.drain();
    const byDelivery = new Map<string, { attempt: number; simAt: number; status: number | null }[]>();
    for (const a of s.attempts()) {
      const key = `${a.seq}|${a.address}`;
      byDelivery.set(key, [...(byDelivery.get(key) ?? []), a]);
    }
    expect(byDelivery.size).toBeGreaterThan(3);
    for (const attempts of byDelivery.values()) {
      expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
      expect(attempts.map((a) => a.status)).toEqual([500, 500, 200]);
      const [a1, a2, a3] = attempts.map((a) => a.simAt) as [number, number, number];
      expect(a2 - a1).toBeGreaterThanOrEqual(MINUTE_MS);
      expect(a3 - a2).toBeGreaterThanOrEqual(2 * MINUTE_MS);
      expect(a3 - a2).toBeGreaterThan(a2 - a1);
    }
    expect(s.stats()).toMatchObject({ gaveUp: 0, pending: 0, inFlight: 0 });
    // A 5xx may have been answered while the receiver's commit was still in flight (bnpl-recon's 503
    // at its ack deadline): each such attempt is an uncertain delivery of the ground truth.
    const uncertain = s.groundTruth({ environment: 'sandbox' }).uncertain_deliveries;
    expect(uncertain).toHaveLength(byDelivery.size * 2);
    expect(new Set(uncertain.map((u) => u.details))).toEqual(new Set(['attempt 1 answered 500', 'attempt 2 answered 500']));
  });

  it('gives up after five retries (six attempts) when the receiver never answers 2xx', async () => {
    const receiver = await startReceiver(() => 503);
    cleanups.push(receiver.close);
    const s = await sim({ seed: 'giveup', business: { ordersPerDay: 24 } });
    s.register('sandbox', 'order/authorized', receiver.url);
    await s.advance(3 * HOUR_MS);
    await s.drain();
    const stats = s.stats();
    expect(stats.gaveUp).toBeGreaterThan(0);
    expect(stats.attempted).toBe(stats.gaveUp * 6);
    expect(stats.succeeded).toBe(0);
    const gaps = s
      .attempts()
      .filter((a) => a.seq === s.attempts()[0]?.seq)
      .map((a) => a.simAt)
      .map((t, i, all) => (i === 0 ? 0 : t - (all[i - 1] as number)))
      .slice(1);
    expect(gaps).toHaveLength(5);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThan(gaps[i - 1] as number);
  });
});
