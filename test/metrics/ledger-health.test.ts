import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqlClient, type Database } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { at, pass, pollRun, snapshot } from '../reconcile/fixtures.js';
import { testMetrics } from '../helpers/metrics.js';

/** One replica's /metrics families that read the ledger, on a database client of its own. */
function replica(database: Database) {
  return testMetrics(database).registry;
}

const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('ledger-read metrics', () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
  });

  it('report the ledger\'s last complete poll and pass, the same on every replica; keep them through an outage that they report', async () => {
    db = await createTestDatabase('ledger_health', { poolMax: 4 });
    const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

    const fresh = await replica(db).metrics();
    expect(sample(fresh, 'bnpl_recon_database_up')).toBe(1);
    expect(fresh).toContain(`bnpl_recon_build_info{version="${version}",node="${process.version}",commit="unknown",environment="sandbox"} 1`);
    // Nothing complete yet: absent, not 0 (which would read as "1970").
    expect(sample(fresh, 'bnpl_recon_poll_last_complete_timestamp_seconds{environment="sandbox"}')).toBeUndefined();

    // A complete sandbox poll, then a failed one; a later production poll must not count.
    const run = await pollRun(db, at(0));
    await pollRun(db, at(600), 'failed');
    await pollRun(db, at(1200), 'complete', 'production');
    await snapshot(db, { order: randomUUID(), state: 'declined', seenAt: at(0), runId: run });
    const summary = await pass(db, at(7200));
    expect(summary.opened).toBe(1);
    const [finished] = await db.sql<{ poll: number; pass: number }[]>`
      select (select extract(epoch from finished_at)::float8 from poll_runs where id = ${run}) as poll,
             (select extract(epoch from max(finished_at))::float8 from reconcile_runs where status = 'complete') as pass`;

    // Two replicas, each with its own pool: both read the same values from the ledger.
    const clients = [createSqlClient(db.url, { poolMax: 2 }), createSqlClient(db.url, { poolMax: 2 })];
    const [a, b] = clients.map((sql) => replica({ sql } as Database));
    for (const registry of [a!, b!]) {
      const text = await registry.metrics();
      expect(sample(text, 'bnpl_recon_poll_last_complete_timestamp_seconds{environment="sandbox"}')).toBeCloseTo(finished!.poll, 3);
      expect(sample(text, 'bnpl_recon_reconcile_last_complete_timestamp_seconds{environment="sandbox"}')).toBeCloseTo(finished!.pass, 3);
      expect(sample(text, 'bnpl_recon_discrepancies_open{kind="missed_webhook"}')).toBe(1);
      expect(sample(text, 'bnpl_recon_ledger_read_failures_total{source="freshness"}')).toBe(0);
    }

    // Replica a loses its database: it says so, and keeps the last values it read.
    await clients[0]!.end({ timeout: 1 });
    const before = Date.now() / 1000;
    const down = await a!.metrics();
    expect(sample(down, 'bnpl_recon_database_up')).toBe(0);
    expect(sample(down, 'bnpl_recon_database_last_error_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(before));
    expect(sample(down, 'bnpl_recon_poll_last_complete_timestamp_seconds{environment="sandbox"}')).toBeCloseTo(finished!.poll, 3);
    expect(sample(down, 'bnpl_recon_discrepancies_open{kind="missed_webhook"}')).toBe(1);
    expect(sample(down, 'bnpl_recon_ledger_read_failures_total{source="freshness"}')).toBe(1);
    expect(sample(down, 'bnpl_recon_ledger_read_failures_total{source="discrepancies"}')).toBe(1);

    // A replica started during an outage reports no discrepancy count rather than a false 0.
    const dead = createSqlClient('postgres://postgres@127.0.0.1:1/none', { poolMax: 1 });
    const cold = await replica({ sql: dead } as Database).metrics();
    expect(sample(cold, 'bnpl_recon_database_up')).toBe(0);
    expect(cold).not.toMatch(/^bnpl_recon_discrepancies_open\{/m);
    await dead.end({ timeout: 1 });
    await clients[1]!.end({ timeout: 1 });
  });
});
