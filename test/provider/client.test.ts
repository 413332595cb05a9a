import { afterEach, describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../helpers/wait.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { createProviderClient, type ProviderClient } from '../../src/provider/client.js';
import { ProviderHttpError, ProviderNetworkError, ProviderResponseError } from '../../src/provider/errors.js';
import { FakeProvider, type Fault, type FakeProviderOptions } from './fake-provider.js';
import { TEST_API_KEY, capturingLogger, testConfig } from './helpers.js';
import { createProviderMetrics } from '../../src/provider/metrics.js';

const open: { provider: FakeProvider; client: ProviderClient }[] = [];

async function setup(options: Partial<FakeProviderOptions> = {}, settings: Record<string, string | number> = {}) {
  const provider = new FakeProvider({ apiKey: TEST_API_KEY, orders: 250, ...options });
  const url = await provider.listen();
  const config = testConfig({ PROVIDER_BASE_URL: url, HTTP_BODY_TIMEOUT_MS: 500, HTTP_CONNECT_TIMEOUT_MS: 500, ...settings });
  const { log, lines } = capturingLogger();
  const registry = createRegistry({ defaultMetrics: false });
  const client = createProviderClient(config, log, createProviderMetrics(registry), { backoff: { baseMs: 5, capMs: 50, maxRetryAfterMs: 2000 } });
  open.push({ provider, client });
  return { provider, client, lines, registry, config };
}

/** Faults for the first `times` requests of a kind, then normal answers. */
function firstFaults(fault: Fault, times: number): (info: { n: number }) => Fault | undefined {
  let left = times;
  return () => (left-- > 0 ? fault : undefined);
}

afterEach(async () => {
  for (const { provider, client } of open.splice(0)) {
    await client.close();
    await provider.close();
  }
});

describe('provider client against a loopback provider', () => {
  it('reads a page newest first, tolerating extra fields, with the Api-Token header', async () => {
    const { client, provider } = await setup();
    const page = await client.getOrdersPage(1, 100);
    expect(page.orders).toHaveLength(100);
    expect(page.orders[0]?.uuid).toBe(provider.orders[249]?.uuid);
    expect(page.stats).toEqual({ requests: 1, throttled: 0, retries: 0 });
    const last = await client.getOrdersPage(3, 100);
    expect(last.orders).toHaveLength(50);
  });

  it('fails 401 at once with status and errors[], and never reveals the key', async () => {
    const { client, provider, lines } = await setup({ apiKey: 'the-right-key', echoKeyInErrors: true });
    const error = await client.getOrdersPage(1, 100).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderHttpError);
    const http = error as ProviderHttpError;
    expect(http.status).toBe(401);
    expect(http.retryable).toBe(false);
    expect(http.errors[0]?.name).toBe('Api-Token');
    expect(http.message).toMatch(/401.*PROVIDER_API_KEY/);
    expect(provider.stats.unauthorized).toBe(1);
    // The provider echoed the key in its error details; it must be scrubbed everywhere.
    expect(JSON.stringify(http.errors)).toContain('[redacted]');
    const everything = `${http.message} ${JSON.stringify(http)} ${String(http.stack)} ${lines.join('')}`;
    expect(everything).not.toContain(TEST_API_KEY);
  });

  it('does not retry a 422 and keeps the validation details', async () => {
    const { client, provider } = await setup({ fault: () => 'unprocessable' });
    const error = (await client.getOrdersPage(1, 100).catch((e: unknown) => e)) as ProviderHttpError;
    expect(error.status).toBe(422);
    expect(error.errors).toEqual([{ name: 'per_page', details: 'must be an integer' }]);
    expect(provider.stats.accepted).toBe(1);
  });

  it.each<[Fault, number]>([
    ['server_error', 2],
    ['malformed_json', 2],
    ['truncated', 1],
    ['reset', 2],
    ['stall', 1],
  ])('retries %s on a GET and then succeeds', async (fault, times) => {
    const { client, provider, lines } = await setup({ fault: firstFaults(fault, times) });
    const page = await client.getOrdersPage(1, 100);
    expect(page.orders).toHaveLength(100);
    expect(page.stats.retries).toBe(times);
    expect(provider.stats.faults).toBe(times);
    expect(lines.join('')).not.toContain(TEST_API_KEY);
  });

  it('waits through a slow body that keeps within the timeout', async () => {
    const { client } = await setup({ fault: () => 'slow_body', slowBodyMs: 100 });
    const page = await client.getOrdersPage(2, 100);
    expect(page.orders).toHaveLength(100);
    expect(page.stats.retries).toBe(0);
  });

  it('gives up after HTTP_MAX_RETRIES on a persistent 5xx with a retryable error', async () => {
    const { client, provider } = await setup({ fault: () => 'server_error' }, { HTTP_MAX_RETRIES: 3 });
    const error = (await client.getOrdersPage(1, 100).catch((e: unknown) => e)) as ProviderHttpError;
    expect(error.status).toBe(503);
    expect(error.retryable).toBe(true);
    expect(error.stats).toEqual({ requests: 4, throttled: 0, retries: 3 });
    expect(provider.stats.accepted).toBe(4);
  });

  it('gives up on a stalled body with a timeout error', async () => {
    const { client } = await setup({ fault: () => 'stall' }, { HTTP_MAX_RETRIES: 1 });
    const error = (await client.getOrdersPage(1, 100).catch((e: unknown) => e)) as ProviderNetworkError;
    expect(error).toBeInstanceOf(ProviderNetworkError);
    expect(error.retryable).toBe(true);
    expect(error.stats.requests).toBe(2);
  });

  it('rejects a well-formed answer of the wrong shape without retrying', async () => {
    const { client, provider } = await setup();
    provider.orders.push({ uuid: 'not-a-uuid', state: 'confirmed', external_reference_id: 'x' });
    const error = await client.getOrdersPage(1, 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderResponseError);
    expect((error as ProviderResponseError).retryable).toBe(false);
  });

  it('honours Retry-After on 429 and lowers its own rate', async () => {
    const { client, provider } = await setup({ rateLimit: 3, retryAfter: 'seconds' }, { RATE_LIMIT_RPS: 500 });
    const pages = await Promise.all([1, 2, 3, 4].map((p) => client.getOrdersPage(p, 50)));
    expect(pages.map((p) => p.orders.length)).toEqual([50, 50, 50, 50]);
    const throttled = pages.reduce((n, p) => n + p.stats.throttled, 0);
    expect(throttled).toBeGreaterThanOrEqual(1);
    expect(provider.stats.throttled).toBe(throttled);
    expect(client.limiter.currentRate()).toBeLessThan(500);
  });

  it("holds every request, not only the rejected one's retry, until a 429's Retry-After has passed", async () => {
    const { client, provider } = await setup({ rateLimit: 3, retryAfter: 'seconds' }, { RATE_LIMIT_RPS: 500 });
    await Promise.all([1, 2, 3].map((p) => client.getOrdersPage(p, 40)));
    // The window is full: page 4 is answered 429 with Retry-After 1 (second), and waits to retry.
    const fourth = client.getOrdersPage(4, 40);
    // Once the client has read the 429 (the provider counts it when it sends it, a moment before).
    await waitFor('the 429', () => (client.limiter.throttleSignals === 1 ? true : undefined), 2000, 2);
    // Two more pages asked for meanwhile go out only after the pause, with the retry: three, the
    // provider's budget for the next second, so none of them is refused.
    const later = [5, 6].map((p) => client.getOrdersPage(p, 40));
    await sleep(500);
    expect(provider.stats.requests).toBe(4);
    const pages = await Promise.all([fourth, ...later]);
    expect(pages.map((p) => p.orders.length)).toEqual([40, 40, 40]);
    expect(provider.stats.throttled).toBe(1);
    expect(provider.stats.requests).toBe(7);
  });

  it('fetches webhook secrets in both forms under the configured prefix', async () => {
    const a = await setup({ webhookSecrets: ['s1'], keysShape: 'object' });
    expect(await a.client.fetchWebhookSecrets()).toEqual(['s1']);
    const b = await setup({ webhookSecrets: ['s1', 's2'], keysShape: 'list', webhookPrefix: '/api/v1' }, { PROVIDER_WEBHOOK_PATH_PREFIX: '/api/v1' });
    expect(await b.client.fetchWebhookSecrets()).toEqual(['s1', 's2']);
  });

  it('registers a webhook, and does not retry a POST the provider may have applied', async () => {
    const { client, provider } = await setup();
    expect(await client.registerWebhook('order', 'https://merchant.example/webhooks')).toEqual({ status: 201 });
    expect(provider.stats.registrations).toEqual([{ topic: 'order', address: 'https://merchant.example/webhooks' }]);
    const failing = await setup({ fault: () => 'server_error' });
    const error = (await failing.client.registerWebhook('invoice', 'https://m.example/w').catch((e: unknown) => e)) as ProviderHttpError;
    expect(error.status).toBe(503);
    expect(failing.provider.stats.accepted).toBe(1);
    const invalid = (await client.registerWebhook('', 'https://m.example/w').catch((e: unknown) => e)) as ProviderHttpError;
    expect(invalid.status).toBe(422);
    expect(invalid.errors[0]).toEqual({ name: 'topic', details: 'must be filled' });
  });

  it('counts attempts by outcome in its metrics', async () => {
    const { client, registry } = await setup({ fault: firstFaults('server_error', 1) });
    await client.getOrdersPage(1, 10);
    const text = await registry.metrics();
    expect(text).toMatch(/bnpl_recon_provider_requests_total\{operation="orders",outcome="server_error"\} 1/);
    expect(text).toMatch(/bnpl_recon_provider_requests_total\{operation="orders",outcome="ok"\} 1/);
    expect(text).not.toContain(TEST_API_KEY);
  });
});
