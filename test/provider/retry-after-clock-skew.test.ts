import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPoll } from '../../src/poller/run.js';
import { createProviderClient } from '../../src/provider/client.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { capturingLogger, testConfig } from './helpers.js';
import { Loopback, json, uuidOf } from '../poller/loopback-provider.js';

/**
 * Spec, Limits: "Recommended client behaviour on 429: retry with exponential backoff". docs/settings.md,
 * HTTP_MAX_RETRIES: Retry-After honoured, "never retried sooner". A Retry-After given as an HTTP-date
 * is a time on the provider's clock, measured from its answer's `Date` header (client.ts
 * providerNowMs). Read against this machine's clock with the provider's 5 s behind, "come back in
 * 2 s" was a date in the past: every retry within one throttled second, and the poll failed.
 */
let database: TestDatabase;
let provider: Loopback | undefined;
beforeAll(async () => {
  database = await createTestDatabase('retry_after_skew');
});
afterAll(async () => {
  await provider?.close();
});

const SKEW_MS = 5000; // the provider's clock runs 5 s behind ours

describe('a 429 whose Retry-After is an HTTP-date from a provider clock behind ours', () => {
  it('is waited for (as the provider\'s Date header places it), and the poll completes', { timeout: 30_000 }, async () => {
    let throttleUntil = 0;
    const arrivals: number[] = [];
    provider = new Loopback((_req, res, url) => {
      const now = performance.now();
      arrivals.push(now);
      if (throttleUntil === 0) throttleUntil = now + 1500; // the provider throttles this client for 1.5 s
      const providerNow = Date.now() - SKEW_MS;
      if (now < throttleUntil) {
        return json(res, 429, { status: 429, errors: [{ name: 'rate_limit', details: 'too many requests' }] }, {
          date: new Date(providerNow).toUTCString(),
          'retry-after': new Date(providerNow + 2000).toUTCString(),
        });
      }
      const page = Number(url.searchParams.get('page'));
      json(res, 200, { orders: page === 1 ? [{ uuid: uuidOf(1), state: 'confirmed', external_reference_id: 'R1' }] : [] }, { date: new Date(providerNow).toUTCString() });
    });
    const url = await provider.listen();
    const config = testConfig({ PROVIDER_BASE_URL: url, PROVIDER_ENV: 'sandbox', HTTP_BODY_TIMEOUT_MS: 2000, HTTP_CONNECT_TIMEOUT_MS: 1000 });
    const { log } = capturingLogger();
    const { metrics } = testMetrics(database);
    const client = createProviderClient(config, log, metrics.provider); // the daemon's default backoff and HTTP_MAX_RETRIES (6)
    try {
      const summary = await runPoll({ config, log, database, metrics }, client);
      const spread = Math.round(arrivals[arrivals.length - 1]! - arrivals[0]!);
      expect(summary.error, `${arrivals.length} requests within ${spread} ms`).toBeNull();
      expect(summary.status).toBe('complete');
      // The first retry came no sooner than the 2 s the provider asked for.
      expect(Math.round(arrivals[1]! - arrivals[0]!)).toBeGreaterThanOrEqual(1900);
    } finally {
      await client.close();
    }
  });
});

describe('retryDelayMs with a Retry-After of 0', () => {
  it('still backs off within the exponential window: later retries may wait longer', async () => {
    const { retryDelayMs, DEFAULT_BACKOFF } = await import('../../src/provider/backoff.js');
    const top = () => 0.999999;
    expect(retryDelayMs(0, 0, DEFAULT_BACKOFF, top)).toBeLessThan(200);
    expect(retryDelayMs(5, 0, DEFAULT_BACKOFF, top)).toBeGreaterThanOrEqual(3_199);
    // A Retry-After above the window is the floor, as before.
    expect(retryDelayMs(0, 2_000, DEFAULT_BACKOFF, () => 0)).toBe(2_000);
  });
});
