import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviderClient, type ProviderClient } from '../../src/provider/client.js';
import { runPoll } from '../../src/poller/run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { FakeProvider, type FakeProviderOptions, type Fault } from '../provider/fake-provider.js';
import { TEST_API_KEY, capturingLogger, testConfig } from '../provider/helpers.js';
import { testMetrics } from '../helpers/metrics.js';

let database: TestDatabase;
const open: { provider: FakeProvider; client: ProviderClient }[] = [];

beforeAll(async () => {
  database = await createTestDatabase('poller_poll');
});
afterAll(async () => {
  for (const { provider, client } of open.splice(0)) {
    await client.close();
    await provider.close();
  }
});

async function setup(environment: 'sandbox' | 'production', options: Partial<FakeProviderOptions>, settings: Record<string, string | number> = {}) {
  const provider = new FakeProvider({ apiKey: TEST_API_KEY, ...options });
  const url = await provider.listen();
  const config = testConfig({
    PROVIDER_BASE_URL: url,
    PROVIDER_ENV: environment,
    HTTP_BODY_TIMEOUT_MS: 400,
    HTTP_CONNECT_TIMEOUT_MS: 400,
    ...settings,
  });
  const { log, lines } = capturingLogger();
  const { registry, metrics } = testMetrics(database);
  const client = createProviderClient(config, log, metrics.provider, { backoff: { baseMs: 5, capMs: 100, maxRetryAfterMs: 1500 } });
  open.push({ provider, client });
  return { provider, client, lines, registry, ctx: { config, log, database, metrics } };
}

async function snapshotCount(environment: string): Promise<number> {
  const rows = await database.sql<{ n: number }[]>`select count(*)::int as n from order_snapshots where environment = ${environment}::provider_environment`;
  return rows[0]!.n;
}

describe('runPoll against a rate-limited, faulty, moving provider', () => {
  it('puts every order in the ledger exactly once despite 429s, faults and inserts mid-scan', async () => {
    const faults: Fault[] = ['server_error', 'malformed_json', 'slow_body', 'reset', 'truncated', 'stall'];
    let nth = 0;
    const { provider, client, lines, ctx } = await setup(
      'sandbox',
      {
        orders: 8_000,
        // A low provider limit and a client ceiling far above it: 429s are certain.
        rateLimit: 60,
        slowBodyMs: 60,
        // A fault every 17th page request, cycling through the kinds.
        fault: (info) => (info.n % 11 === 0 ? faults[nth++ % faults.length] : undefined),
        // Orders keep arriving during the scan: they push older orders onto later pages.
        beforePage: (info, p) => {
          if (info.n % 25 === 0) p.addOrders(1, 'authorized');
        },
      },
      { RATE_LIMIT_RPS: 300, POLL_CONCURRENCY: 8 },
    );
    const atStart = provider.orders.map((o) => o.uuid);
    const summary = await runPoll(ctx, client);
    expect(summary.error).toBeNull();
    expect(summary.status).toBe('complete');
    expect(provider.stats.faults).toBeGreaterThan(5);
    expect(provider.stats.throttled).toBeGreaterThan(0);
    expect(summary.throttled).toBe(provider.stats.throttled);

    const rows = await database.sql<{ order_uuid: string }[]>`select order_uuid from order_snapshots where environment = 'sandbox'`;
    const inLedger = new Set(rows.map((r) => r.order_uuid));
    expect(rows.length).toBe(inLedger.size); // exactly once
    expect(atStart.filter((u) => !inLedger.has(u))).toEqual([]); // none missed
    expect(summary.orders).toBe(rows.length);
    const runs = await database.sql<{ status: string; pages: number; orders: number; requests: number; throttled: number; retries: number }[]>`
      select status::text, pages, orders, requests, throttled, retries from poll_runs where id = ${summary.runId}`;
    expect(runs[0]).toMatchObject({ status: 'complete', orders: rows.length, throttled: summary.throttled, requests: summary.requests });
    expect(runs[0]!.retries).toBeGreaterThan(0);
    expect(runs[0]!.pages).toBeGreaterThanOrEqual(Math.ceil(8_000 / 100));
    const observations = await database.sql<{ n: number }[]>`select count(*)::int as n from order_state_observations where poll_run_id = ${summary.runId}`;
    expect(observations[0]!.n).toBe(rows.length);
    expect(lines.join('')).not.toContain(TEST_API_KEY);
  });

  it('moves state_since only on a state change and records each change once', async () => {
    const { provider, client, ctx } = await setup('production', { orders: 450, rateLimit: 0 });
    const first = await runPoll(ctx, client);
    expect(first.status).toBe('complete');
    const changed = provider.orders.slice(0, 3);
    for (const o of changed) o.state = 'shipped';
    provider.orders[3]!.state = 'partially_shipped';
    const second = await runPoll(ctx, client);
    expect(second.status).toBe('complete');
    expect(second.orders).toBe(450);
    const snaps = await database.sql<{ order_uuid: string; state: string; first_seen_run_id: string; last_seen_run_id: string; state_since_run_id: string }[]>`
      select order_uuid, state, first_seen_run_id::text, last_seen_run_id::text, state_since_run_id::text
      from order_snapshots where environment = 'production'`;
    expect(snaps).toHaveLength(450);
    const changedIds = new Set([...changed, provider.orders[3]!].map((o) => o.uuid));
    for (const s of snaps) {
      expect(s.first_seen_run_id).toBe(String(first.runId));
      expect(s.last_seen_run_id).toBe(String(second.runId));
      expect(s.state_since_run_id).toBe(String(changedIds.has(s.order_uuid) ? second.runId : first.runId));
    }
    const obs = await database.sql<{ order_uuid: string; state: string; previous_state: string | null }[]>`
      select order_uuid, state, previous_state from order_state_observations
      where environment = 'production' and poll_run_id = ${second.runId} order by order_uuid`;
    expect(obs.map((o) => o.state).sort()).toEqual(['partially_shipped', 'shipped', 'shipped', 'shipped']);
    expect(obs.every((o) => o.previous_state !== null && o.previous_state !== o.state)).toBe(true);
    // A third poll with nothing changed adds no observation.
    const third = await runPoll(ctx, client);
    const none = await database.sql<{ n: number }[]>`select count(*)::int as n from order_state_observations where poll_run_id = ${third.runId}`;
    expect(none[0]!.n).toBe(0);
  });

  it('fails clearly on 401 without retrying or revealing the key', async () => {
    const { provider, client, lines, ctx } = await setup('sandbox', { orders: 10, apiKey: 'another-key', echoKeyInErrors: true });
    const summary = await runPoll(ctx, client);
    expect(summary.status).toBe('failed');
    expect(summary.error).toMatch(/401/);
    expect(summary.error).toMatch(/PROVIDER_API_KEY/);
    expect(provider.stats.accepted).toBe(1);
    const runs = await database.sql<{ status: string; error: string }[]>`select status::text, error from poll_runs where id = ${summary.runId}`;
    expect(runs[0]!.status).toBe('failed');
    expect(runs[0]!.error).toMatch(/401/);
    expect(`${runs[0]!.error} ${lines.join('')}`).not.toContain(TEST_API_KEY);
  });

  it('fails clearly on 422 without retrying', async () => {
    const { provider, client, ctx } = await setup('sandbox', { orders: 10, fault: () => 'unprocessable' });
    const summary = await runPoll(ctx, client);
    expect(summary.status).toBe('failed');
    expect(summary.error).toMatch(/422.*per_page: must be an integer/);
    expect(provider.stats.accepted).toBe(1);
  });

  it('stops with a warning, as failed, when the provider ignores paging', async () => {
    const { provider, client, lines, ctx } = await setup('sandbox', { orders: 500, ignorePaging: true });
    const summary = await runPoll(ctx, client);
    expect(summary.status).toBe('failed');
    expect(summary.error).toMatch(/ignores the paging/);
    expect(lines.some((l) => l.includes('"level":40') && l.includes('ignores the paging'))).toBe(true);
    expect(provider.stats.pages).toBeLessThan(30);
  });

  it('pages by the provider\'s own smaller page size', async () => {
    const before = await snapshotCount('sandbox');
    const { provider, client, ctx } = await setup('sandbox', { orders: 333, maxPageSize: 40 });
    const summary = await runPoll(ctx, client);
    expect(summary.status).toBe('complete');
    expect(summary.pageSize).toBe(40);
    expect(summary.orders).toBe(333);
    // Same uuids as earlier tests' providers: the snapshot rows are shared, never duplicated.
    expect(await snapshotCount('sandbox')).toBe(Math.max(before, 333));
    expect(provider.stats.pages).toBeGreaterThanOrEqual(9);
  });

  it('records an aborted run when its signal fires, and logs it as a warning, not an error', async () => {
    const { client, ctx, lines } = await setup('sandbox', { orders: 5000, rateLimit: 0 }, { RATE_LIMIT_RPS: 50 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('test stop')), 200);
    const summary = await runPoll(ctx, client, controller.signal);
    expect(summary.status).toBe('aborted');
    const runs = await database.sql<{ status: string; finished_at: Date | null }[]>`select status::text, finished_at from poll_runs where id = ${summary.runId}`;
    expect(runs[0]!.status).toBe('aborted');
    expect(runs[0]!.finished_at).not.toBeNull();
    const aborted = lines.filter((l) => l.includes('poll run aborted'));
    expect(aborted).toHaveLength(1);
    expect(aborted[0]).toContain('"level":40');
    expect(aborted[0]).toContain('test stop');
  });
});
