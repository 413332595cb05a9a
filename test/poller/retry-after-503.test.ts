import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProviderClient } from '../../src/provider/client.js';
import { runPoll } from '../../src/poller/run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { capturingLogger, testConfig } from '../provider/helpers.js';
import { Loopback, json, uuidOf } from './loopback-provider.js';

/**
 * docs/settings.md, HTTP_MAX_RETRIES: "retries of a 429, 5xx, reset or timeout (exponential backoff,
 * full jitter, `Retry-After` honoured)": a 503 with Retry-After (a maintenance answer, RFC 9110
 * section 10.2.3) is retried no sooner than it asks, as a 429 is.
 */
let database: TestDatabase;
let provider: Loopback | undefined;
beforeAll(async () => {
  database = await createTestDatabase('pl_retry_after_503');
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

describe('a 503 with Retry-After', () => {
  it('is retried no earlier than the Retry-After asks', { timeout: 30_000 }, async () => {
    const arrivals: number[] = [];
    provider = new Loopback((_req, res, u) => {
      if (u.searchParams.get('page') !== '1') return json(res, 200, { orders: [] });
      arrivals.push(performance.now());
      if (arrivals.length === 1) return json(res, 503, { status: 503, errors: [{ name: 'service', details: 'maintenance' }] }, { 'retry-after': '3' });
      json(res, 200, { orders: [{ uuid: uuidOf(1), state: 'confirmed', external_reference_id: 'R1' }] });
    });
    const url = await provider.listen();
    const config = testConfig({ PROVIDER_BASE_URL: url, PROVIDER_ENV: 'sandbox' });
    const { log } = capturingLogger();
    const { metrics } = testMetrics(database);
    const client = createProviderClient(config, log, metrics.provider); // the daemon's default backoff
    try {
      const summary = await runPoll({ config, log, database, metrics }, client);
      expect(summary.error).toBeNull();
      expect(arrivals.length).toBeGreaterThanOrEqual(2);
      const gap = Math.round(arrivals[1]! - arrivals[0]!);
      expect(gap, 'ms between the 503 (Retry-After: 3) and its retry').toBeGreaterThanOrEqual(3000);
    } finally {
      await client.close();
    }
  });
});
