import { describe, expect, it } from 'vitest';
import { fullJitterDelayMs, parseRetryAfterMs, retryDelayMs, DEFAULT_BACKOFF } from '../../src/provider/backoff.js';
import { RateLimiter } from '../../src/provider/rate-limiter.js';
import { ProviderHttpError, scrub } from '../../src/provider/errors.js';
import { ordersPageSchema, parseOrdersPage, webhookKeysSchema } from '../../src/provider/schemas.js';

describe('backoff', () => {
  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfterMs('3', now)).toBe(3000);
    expect(parseRetryAfterMs('0.25', now)).toBe(250);
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
  });

  it('full jitter stays within [0, min(cap, base*2^n))', () => {
    const policy = { baseMs: 100, capMs: 1000, maxRetryAfterMs: 5000 };
    expect(fullJitterDelayMs(0, policy, () => 0.999)).toBe(99);
    expect(fullJitterDelayMs(3, policy, () => 0.5)).toBe(400);
    expect(fullJitterDelayMs(20, policy, () => 0.999)).toBe(999);
    expect(fullJitterDelayMs(5, policy, () => 0)).toBe(0);
  });

  it('never retries before Retry-After, however long', () => {
    for (const r of [0, 0.3, 0.999]) expect(retryDelayMs(0, 2000, DEFAULT_BACKOFF, () => r)).toBeGreaterThanOrEqual(2000);
    // Never earlier than asked: a Retry-After the client will not wait for fails the call instead (client.ts).
    expect(retryDelayMs(0, 10 * 3600_000, DEFAULT_BACKOFF, () => 0)).toBe(10 * 3600_000);
  });
});

describe('rate limiter', () => {
  it('spaces slots 1/rate apart without banking idle time', () => {
    let now = 0;
    const limiter = new RateLimiter({ ratePerSecond: 500, now: () => now });
    const slots = Array.from({ length: 5 }, () => limiter.reserve().slotMs);
    expect(slots).toEqual([0, 2, 4, 6, 8]);
    now = 10_000; // a long idle spell must not allow a burst afterwards
    const after = Array.from({ length: 3 }, () => limiter.reserve().slotMs);
    expect(after).toEqual([10_000, 10_002, 10_004]);
  });

  it('cuts the rate once per burst of 429s and recovers linearly', () => {
    let now = 0;
    const limiter = new RateLimiter({ ratePerSecond: 400, decrease: 0.5, recoveryPerSecond: 0.25, now: () => now });
    now = 100;
    expect(limiter.onThrottled(50)).toBe(true);
    expect(limiter.currentRate()).toBe(200);
    // Requests that were in flight together with the first rejected one are the same signal.
    expect(limiter.onThrottled(60)).toBe(false);
    expect(limiter.onThrottled(99)).toBe(false);
    expect(limiter.currentRate()).toBe(200);
    now = 1100; // one second later: +25% of the ceiling
    expect(limiter.currentRate()).toBe(300);
    now = 10_000;
    expect(limiter.currentRate()).toBe(400);
    expect(limiter.onThrottled(9_000)).toBe(true);
    expect(limiter.onThrottled(9_500)).toBe(false);
  });

  it('never lets the provider see more than the window allows, however late answers come', () => {
    let now = 0;
    const limiter = new RateLimiter({ ratePerSecond: 3, now: () => now });
    // Three out, none answered: a fourth must wait for an answer, not for a time.
    for (let i = 0; i < 3; i += 1) {
      expect(limiter.windowWaitMs()).toBe(0);
      limiter.sent();
    }
    expect(limiter.windowWaitMs()).toBe(Number.POSITIVE_INFINITY);
    now = 40; // the first answer arrives late: the provider may have counted it as late as this
    limiter.answered();
    expect(limiter.windowWaitMs()).toBe(1000);
    now = 1039;
    expect(limiter.windowWaitMs()).toBe(1);
    now = 1040;
    expect(limiter.windowWaitMs()).toBe(0);
    limiter.answered();
    limiter.answered();
    // Two answered at 1040 plus the one at 40 (now aged out): room for one more only.
    limiter.sent();
    expect(limiter.windowWaitMs()).toBe(1000);
  });

  it('acquire keeps the slot spacing when the window has room', async () => {
    const limiter = new RateLimiter({ ratePerSecond: 2, windowMs: 30 });
    const t0 = performance.now();
    await limiter.acquire();
    limiter.answered();
    await limiter.acquire();
    limiter.answered();
    await limiter.acquire();
    // Slots are 500 ms apart at 2/s; the window check must not make them any sooner.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(990);
    limiter.answered();
  });

  it("a 429's Retry-After holds every slot until it has passed, even within one burst's signal", () => {
    let now = 0;
    const limiter = new RateLimiter({ ratePerSecond: 500, now: () => now });
    limiter.reserve();
    now = 10;
    expect(limiter.onThrottled(5, 1000)).toBe(true);
    expect(limiter.reserve().slotMs).toBe(1010);
    // A second rejection of the same burst does not cut the rate again, but a longer wait it asks holds.
    now = 20;
    expect(limiter.onThrottled(6, 2000)).toBe(false);
    expect(limiter.reserve().slotMs).toBe(2020);
    now = 3000;
    expect(limiter.reserve().slotMs).toBe(3000);
  });

  it('never drops below its floor', () => {
    let now = 0;
    const limiter = new RateLimiter({ ratePerSecond: 100, floorFraction: 0.1, now: () => now });
    for (let i = 0; i < 50; i += 1) {
      now += 1;
      limiter.onThrottled(now);
    }
    expect(limiter.currentRate(now)).toBeCloseTo(10, 5);
  });
});

describe('schemas and errors', () => {
  it('parseOrdersPage gives what the schema gives, and the schema\'s error otherwise', () => {
    const u = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    const pages: unknown[] = [
      { orders: [{ uuid: u(1), state: 'confirmed', external_reference_id: 'a', extra: 1 }, { uuid: u(2).toUpperCase(), state: 'x' }], meta: {} },
      { orders: [{ uuid: u(1), state: 's', external_reference_id: null }, { uuid: u(2), state: 's', external_reference_id: undefined }] },
      [{ order: { uuid: u(3), state: 'complete', external_reference_id: 'x' } }, { uuid: u(4), state: 'pending', order: 'not an object' }],
      { orders: [] },
      [],
    ];
    for (const page of pages) expect(parseOrdersPage(page)).toStrictEqual(ordersPageSchema.parse(page));
    const invalid: unknown[] = [
      { orders: [{ uuid: 'not-a-uuid', state: 'x' }] },
      { orders: [{ uuid: u(1), state: '' }] },
      { orders: [{ uuid: u(1), state: 'x', external_reference_id: 5 }] },
      { orders: [{ order: null }] },
      { orders: 'none' },
      null,
      'text',
    ];
    for (const page of invalid) expect(() => parseOrdersPage(page)).toThrow();
  });

  it('tolerates extra fields and both order list forms', () => {
    const orders = ordersPageSchema.parse({
      orders: [
        { uuid: '00000000-0000-4000-8000-000000000001', state: 'partially_shipped', amount_cents: '10', nested: { a: 1 } },
        { order: { uuid: '00000000-0000-4000-8000-000000000002', state: 'complete', external_reference_id: 'x' } },
      ],
      meta: { total: 2 },
    });
    expect(orders.map((o) => o.state)).toEqual(['partially_shipped', 'complete']);
    expect(() => ordersPageSchema.parse({ orders: [{ uuid: 'not-a-uuid', state: 'x' }] })).toThrow();
  });

  it('reads webhook secrets in the object and the list forms', () => {
    expect(webhookKeysSchema.parse({ webhook_secret: 'a', created_at: 'x' })).toEqual(['a']);
    expect(webhookKeysSchema.parse([{ webhook_secret: 'a' }, 'b'])).toEqual(['a', 'b']);
    expect(webhookKeysSchema.parse({ webhook_secrets: ['a', 'b'] })).toEqual(['a', 'b']);
    expect(() => webhookKeysSchema.parse({})).toThrow();
  });

  it('keeps status and errors[] and decides retryability by status only', () => {
    const e = new ProviderHttpError('POST', '/webhooks', 422, [{ name: 'buyer.email', details: 'must be filled' }]);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain('422');
    expect(e.message).toContain('buyer.email: must be filled');
    expect(new ProviderHttpError('GET', '/x', 503, []).retryable).toBe(true);
    expect(new ProviderHttpError('GET', '/x', 429, []).retryable).toBe(true);
    expect(scrub('key=abc123 and abc123', ['abc123'])).toBe('key=[redacted] and [redacted]');
  });
});
