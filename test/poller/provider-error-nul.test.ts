import { afterEach, describe, expect, it } from 'vitest';
import { createProviderClient, type ProviderClient } from '../../src/provider/client.js';
import { runPoll } from '../../src/poller/run.js';
import { pollOnce } from '../../src/poller/once.js';
import { capturingLogger, testConfig } from '../provider/helpers.js';
import { testMetrics } from '../helpers/metrics.js';
import { Loopback } from '../poller/loopback-provider.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The spec's error body: `errors[].details` is a human-readable string. JSON may carry any
 * character in a string, NUL included (`\u0000`); Postgres text cannot store NUL. runPoll promises
 * (run.ts) that it "does not throw for provider or paging failures: they end the run as `failed`".
 */
let database: TestDatabase;
const closers: (() => Promise<void>)[] = [];
useTestDatabase('poller_nul_error', (d) => (database = d));
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function setup(status: number) {
  const provider = new Loopback((_req, res) => {
    const text = `{"status":${status},"errors":[{"name":"per_page","details":"must be an integer (got \\u0000)"}]}`;
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
    res.end(text);
  });
  const url = await provider.listen();
  closers.push(() => provider.close());
  const config = testConfig({ PROVIDER_BASE_URL: url, PROVIDER_ENV: 'sandbox', HTTP_MAX_RETRIES: 1 });
  const { log } = capturingLogger();
  const { metrics } = testMetrics(database);
  const client: ProviderClient = createProviderClient(config, log, metrics.provider, { backoff: { baseMs: 5, capMs: 20, maxRetryAfterMs: 1000 } });
  closers.push(() => client.close());
  return { client, ctx: { config, log, database, metrics } };
}

describe('a provider error body whose details hold a NUL', () => {
  it('runPoll ends the run failed with the provider error instead of throwing', async () => {
    const { client, ctx } = await setup(422);
    const outcome = await runPoll(ctx, client).then(
      (summary) => ({ summary, thrown: undefined as unknown }),
      (thrown: unknown) => ({ summary: undefined, thrown }),
    );
    expect(outcome.thrown === undefined ? 'resolved' : `threw: ${String((outcome.thrown as Error).message ?? outcome.thrown)}`).toBe('resolved');
    expect(outcome.summary?.status).toBe('failed');
    const runs = await database.sql<{ status: string; error: string | null }[]>`select status::text, error from poll_runs where id = ${outcome.summary!.runId}`;
    expect(runs[0]?.status).toBe('failed');
    expect(runs[0]?.error).toContain('422');
  });

  it('pollOnce (the poll command and the daemon) returns the failed run, not "skipped", and leaves no run "running"', async () => {
    const { client, ctx } = await setup(503);
    const summary = await pollOnce(ctx, client);
    const running = await database.sql<{ id: number }[]>`select id from poll_runs where status = 'running'`;
    expect({ summary: summary?.status, running: running.length }).toEqual({ summary: 'failed', running: 0 });
  });
});
