import { afterAll, expect, it } from 'vitest';
import { runReparse } from '../../src/reparse/run.js';
import { silentLogger } from '../../src/log/logger.js';
import { DEFAULT_FAULT_RATES } from '../../sim/index.js';
import { TYPED_TABLES } from '../../src/webhooks/typed-rows.js';
import { HOUR_MS } from '../../sim/time.js';
import { settleDue, startStack, type Stack } from '../e2e/harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { derivedFields, typedSnapshot } from './old-deliveries.js';
import { testMetrics } from '../helpers/metrics.js';

let db: TestDatabase | undefined;
let stack: Stack | undefined;
afterAll(async () => {
  await stack?.stop();
});

/**
 * The typed tables are a function of webhook_deliveries: simulator traffic (every topic family,
 * retries, second events, numeric amounts) through the real receiver, then every typed table
 * emptied and rebuilt by `ledger reparse --status all` from the stored deliveries alone.
 */
it('every typed table rebuilt from webhook_deliveries alone equals what receipt produced', { timeout: 120_000 }, async () => {
  db = await createTestDatabase('reparse_rebuild', { poolMax: 4 });
  stack = await startStack({ db, seed: 'reparse-rebuild', faults: DEFAULT_FAULT_RATES, ordersPerDay: 48, graceSeconds: 2 });
  await stack.sim.advance(96 * HOUR_MS);
  await settleDue(stack.sim);
  await stack.stop();
  stack = undefined;

  const receipt = await typedSnapshot(db);
  const fields = await derivedFields(db);
  // The traffic reached every typed table, and held retries (deliveries not applied).
  for (const table of TYPED_TABLES) expect(receipt[table]!.length, table).toBeGreaterThan(0);
  expect(fields.filter((f) => f.event_key !== null && !f.applied).length).toBeGreaterThan(0);
  const [numeric] = await db.sql`select count(*)::int as n from webhook_deliveries where convert_from(raw_body, 'UTF8') ~ '"amount_cents"\s*:\s*[0-9]'`;
  expect(numeric!.n).toBeGreaterThan(0);

  await db.sql.unsafe(`truncate ${TYPED_TABLES.join(', ')}`);
  const summary = await runReparse({ database: db, log: silentLogger(), ...testMetrics(db) }, { environment: 'sandbox', status: 'all', dryRun: false, trigger: 'command', batchSize: 200 });
  expect(summary.examined).toBe(fields.length);
  // The same keys and decisions; the typed rows came back, each a change of the applied delivery
  // that wrote it (so the next pass judges what rests on them: test/reparse/rebuild-then-pass.test.ts).
  const typedRows = Object.values(receipt).reduce((n, rows) => n + rows.length, 0);
  expect(summary.outcomes).toMatchObject({ applied: typedRows, now_unparsed: 0, duplicate: 0 });
  expect(summary.changed).toBe(typedRows);
  expect(await derivedFields(db)).toEqual(fields);
  expect(await typedSnapshot(db)).toEqual(receipt);
});
