import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { runReparse } from '../../src/reparse/run.js';
import { silentLogger } from '../../src/log/logger.js';
import { classifyDelivery, type StorableClassification } from '../../src/webhooks/classify.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { createTestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { importCsv, pass } from '../statements/fixtures.js';

/**
 * docs/how-it-decides.md: "Every typed table can be rebuilt from webhook_deliveries alone
 * (`ledger reparse --status all` after emptying them)", and "a pass after a reparse that changed
 * deliveries is a full one, since their typed rows keep their original arrival time". A rebuild
 * writes typed rows with their original (old) arrival time, so the pass after it must judge them:
 * reparse's record has to show that it wrote typed rows.
 */
const PAYOUT = '00000000-0000-4000-8000-000000000077';
const SEPA = 'PO2026030200000077';
const body = `{"topic":"payout/complete","payout_uuid":"${PAYOUT}","sepa_instruction_id":"${SEPA}","amount_cents":"80000","external_reference_ids":"INV-77","event_time":"2026-03-02T06:00:00.000000000Z"}`;

it('after emptying the typed tables and `ledger reparse --status all`, the next pass sees the rebuilt payout: its credit is no longer "without payout"', { timeout: 60_000 }, async () => {
  const d = await createTestDatabase('reparse_rebuild_pass');
  const c = classifyDelivery(Buffer.from(body));
  if (!c.ok || c.status !== 'parsed') throw new Error('fixture does not parse');
  // The payout webhook, received three days ago through the receiver's writer.
  await writeDeliveries(d.sql, [{
    deliveryUuid: randomUUID(), environment: 'sandbox', receivedAt: new Date(Date.now() - 3 * 86_400_000), sourceIp: null,
    headers: { 'content-type': 'application/json' }, rawBody: Buffer.from(body), keyFingerprint: null, classification: c as StorableClassification,
  }]);
  // Its bank credit, in a statement imported three days ago.
  await importCsv(d, [{ ref: 'S1', date: '2026-03-03', cents: 80_000n, sepa: SEPA }]);
  await d.sql`update bank_statements set imported_at = now() - interval '3 days'`;
  const open = async () =>
    (await d.sql`select sepa_reference from discrepancies where kind = 'statement_credit_without_payout' and status = 'open'`).map((r) => r.sepa_reference);

  const t0 = Date.now();
  expect((await pass(d, new Date(t0), { full: true })).skipped).toBe(false);
  expect(await open()).toEqual([]);

  // The typed tables are lost; a full pass judges what is left: the credit has no payout.
  await d.sql`truncate payout_events`;
  await pass(d, new Date(t0 + 1_000), { full: true });
  expect(await open()).toEqual([SEPA]);

  // The documented rebuild.
  const summary = await runReparse({ database: d, log: silentLogger(), ...testMetrics(d) }, { environment: 'sandbox', status: 'all', dryRun: false, trigger: 'command' });
  expect(summary.examined).toBe(1);
  expect((await d.sql`select count(*)::int as n from payout_events`)[0]!.n).toBe(1);

  // The daemon's next scheduled pass (not forced full) must see the rebuilt payout.
  const next = await pass(d, new Date(Date.now() + 2_000));
  expect(next.skipped).toBe(false);
  expect(await open(), `pass mode ${next.mode}, payouts ${JSON.stringify(next.payouts)}`).toEqual([]);
});
