import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProviderClient } from '../../src/provider/client.js';
import { DEFAULT_BACKOFF, retryDelayMs } from '../../src/provider/backoff.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { capturingLogger, testConfig } from '../provider/helpers.js';
import { Loopback, json, uuidOf } from './loopback-provider.js';

/**
 * Promise: "the poll ... honours 429/Retry-After"; backoff.ts: "A Retry-After from the provider is a
 * floor: the retry never comes earlier than the provider asked."
 */
let database: TestDatabase;
let provider: Loopback | undefined;
beforeAll(async () => {
  database = await createTestDatabase('pl_retry_after_cap');
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

describe('Retry-After longer than maxRetryAfterMs', () => {
  it('(pure) the default policy never schedules a retry before a long Retry-After', () => {
    expect(retryDelayMs(0, 90_000, DEFAULT_BACKOFF, () => 0.5)).toBeGreaterThanOrEqual(90_000);
  });

  it('a 429 with a Retry-After longer than the client waits fails the call, saying so, and is not retried early', { timeout: 30_000 }, async () => {
    const arrivals: number[] = [];
    provider = new Loopback((_req, res) => {
      arrivals.push(performance.now());
      if (arrivals.length === 1) return json(res, 429, { status: 429, errors: [{ name: 'rate_limit', details: 'too many requests' }] }, { 'retry-after': '3' });
      json(res, 200, { orders: [{ uuid: uuidOf(1), state: 'confirmed', external_reference_id: 'R1' }] });
    });
    const url = await provider.listen();
    const config = testConfig({ PROVIDER_BASE_URL: url, PROVIDER_ENV: 'sandbox', HTTP_MAX_RETRIES: 2 });
    const { log } = capturingLogger();
    const { metrics } = testMetrics(database);
    // This client waits at most 1 s; the provider asks for 3.
    const client = createProviderClient(config, log, metrics.provider, { backoff: { ...DEFAULT_BACKOFF, maxRetryAfterMs: 1000 } });
    try {
      const failure = await client.getOrdersPage(1, 100).then(() => undefined, (e: unknown) => e as Error);
      expect(failure?.message).toMatch(/Retry-After 3 s is longer than the 1 s this client waits: not retried/);
      expect(arrivals).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});
