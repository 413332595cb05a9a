import { afterAll, expect, it } from 'vitest';
import { createRegistry } from '../../src/metrics/registry.js';
import { silentLogger } from '../../src/log/logger.js';
import { createReparseMetrics } from '../../src/reparse/metrics.js';
import { REPARSE_PACE } from '../../src/reparse/job.js';
import { runReparse } from '../../src/reparse/run.js';
import { classifyDelivery } from '../../src/webhooks/classify.js';
import { rederiveDeliveries } from '../../src/webhooks/ledger-rederive.js';
import { PARSER_VERSION } from '../../src/webhooks/parser-version.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';
import { storeAsOldParser } from './old-deliveries.js';

let receiver: TestReceiver | undefined;
afterAll(async () => {
  await receiver?.close();
});

const payout = (n: number) => {
  const uuid = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return `{"topic":"payout/complete","payout_uuid":"${uuid}","sepa_instruction_id":"PO${n}","amount_cents":${1000 + n},"external_reference_ids":"INV-${n}","event_time":"2026-03-02T06:00:00.000000000Z"}`;
};
const NUMBER_ERROR = 'amount_cents: Expected string, received number';
const reparsed = async (d: TestDatabase) => (await d.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where parser_version = ${PARSER_VERSION}`)[0]!.n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('the receiver reports how long its commits make deliveries wait, and forgets it after 500 ms', { timeout: 30_000 }, async () => {
  const d = await createTestDatabase('reparse_pressure');
  receiver = await startTestReceiver(d);
  expect(receiver.receiver.commitPressureMs()).toBe(0);
  // A lock on the ledger holds the receiver's commit: while it waits, its pressure is the wait so far.
  const lock = d.sql.reserve();
  const held = await lock;
  await held`begin`;
  await held`lock table webhook_deliveries in exclusive mode`;
  const answer = postDelivery(receiver.url, payout(1).replace(/"amount_cents":(\d+)/, '"amount_cents":"$1"'));
  // From when its commit began to wait: the request's own way there took 80 ms on a loaded machine.
  while (receiver.receiver.commitPressureMs() === 0) await sleep(5);
  await sleep(300);
  expect(receiver.receiver.commitPressureMs()).toBeGreaterThanOrEqual(250);
  await held`commit`;
  held.release();
  expect((await answer).status).toBe(200);
  expect(receiver.receiver.commitPressureMs()).toBeGreaterThanOrEqual(250); // the slow commit, just finished
  await sleep(600);
  expect(receiver.receiver.commitPressureMs()).toBe(0);
});

it('the daemon\'s reparse starts no batch while the receiver\'s commits are slow, and finishes once they are fast', { timeout: 30_000 }, async () => {
  const d = await createTestDatabase('reparse_yield');
  await storeAsOldParser(d, Array.from({ length: 250 }, (_, i) => ({ body: payout(i + 1), old: { status: 'invalid_shape' as const, topic: 'payout/complete', error: NUMBER_ERROR } })));
  let pressureMs = 100;
  const metrics = createReparseMetrics(createRegistry({ defaultMetrics: false }));
  const run = runReparse(
    { database: d, log: silentLogger(), metrics: { reparse: metrics } },
    { environment: 'sandbox', status: 'unparsed', dryRun: false, trigger: 'automatic', olderOnly: true, batchSize: 100, duty: 0.5,
      yieldTo: { commitPressureMs: () => pressureMs, pace: REPARSE_PACE } },
  );
  // A second of slow commits; the run's own start (its run record, its first query) takes part of
  // it, up to 70 ms seen on a loaded machine, so the yield is held to half of it.
  await sleep(1000);
  expect(await reparsed(d)).toBe(0);
  pressureMs = 0;
  const summary = await run;
  expect(summary.outcomes).toMatchObject({ applied: 250, duplicate: 0, still_unparsed: 0 });
  expect(await reparsed(d)).toBe(250);
  const yielded = (await metrics.yieldSeconds.get()).values[0]!.value;
  expect(yielded).toBeGreaterThanOrEqual(0.5);
  expect(yielded).toBeLessThan(2.5);
});

it('a reparse batch commits without waiting for the WAL flush, and leaves its connection as it was for the receiver', { timeout: 30_000 }, async () => {
  // One connection, so what the batch leaves behind is what the next user of it sees.
  const d = await createTestDatabase('reparse_no_flush_wait', { poolMax: 1 });
  await storeAsOldParser(d, [{ body: payout(1), old: { status: 'invalid_shape', topic: 'payout/complete', error: NUMBER_ERROR } }]);
  const [row] = await d.sql<{ id: string; raw_body: Buffer }[]>`select id::text, raw_body from webhook_deliveries`;
  const classification = classifyDelivery(row!.raw_body);
  if (!classification.ok) throw new Error('fixture does not parse');
  expect(await rederiveDeliveries(d.sql, [{ deliveryId: Number(row!.id), classification }])).toEqual([{ deliveryId: Number(row!.id), applied: true, typedWritten: true }]);
  expect((await d.sql`show synchronous_commit`)[0]).toEqual({ synchronous_commit: 'on' });
  // Inside a caller's transaction the setting is visible until its end: the batch set it for its transaction only.
  await d.sql.begin(async (tx) => {
    await rederiveDeliveries(tx, [{ deliveryId: Number(row!.id), classification }]);
    expect((await tx`show synchronous_commit`)[0]).toEqual({ synchronous_commit: 'off' });
  });
  expect((await d.sql`show synchronous_commit`)[0]).toEqual({ synchronous_commit: 'on' });
});
