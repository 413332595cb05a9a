import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, startSimulator, type ExpectedDiscrepancy, type Simulator } from '../../sim/index.js';
import { importStatementFile } from '../../src/statements/import.js';
import { streamPayoutsReport } from '../../src/reports/payouts.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import { silentLogger } from '../../src/log/logger.js';
import { PAYOUT_RULE_KINDS } from '../../src/reconcile/rules/registry.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';
import { PAYOUT_FAULTS } from './sim-helpers.js';
import { testMetrics } from '../helpers/metrics.js';

const SETTLEMENT_DAYS = 1;
let sim: Simulator;
let db: TestDatabase;
let receiver: TestReceiver;
let dir: string;
let files: Record<'camt' | 'csv' | 'mt940', string>;

beforeAll(async () => {
  db = await createTestDatabase('statements_e2e');
  // Simulated time ends two days before the real clock, so the pass (at real time) is past every
  // settlement deadline and every payout webhook is older than the grace period.
  const start = Math.floor((Date.now() - 10 * DAY_MS) / DAY_MS) * DAY_MS;
  sim = await startSimulator({ seed: 'e2e-16', startTime: new Date(start).toISOString(), faults: PAYOUT_FAULTS, business: { ordersPerDay: 120 } });
  await sim.advance(8 * DAY_MS);
  receiver = await startTestReceiver(db, { WEBHOOK_SECRET: sim.secrets.sandbox, PROVIDER_ENV: 'sandbox' });
  // The simulator's planned deliveries in planning order, as the provider would send them (no
  // retries needed: the receiver answers 2xx); the wrong-secret copies are refused with 401.
  for (const d of sim.plannedDeliveries()) {
    if (d.env !== 'sandbox') continue;
    const r = await postDelivery(receiver.url, d.body, { signature: d.signature });
    expect(r.status).toBe(d.variant === 'wrong_secret' ? 401 : 200);
  }
  dir = await mkdtemp(path.join(tmpdir(), 'bnpl-stmt-e2e-'));
  const written = await sim.writeStatements(dir);
  const pick = (suffix: string) => written.find((f) => path.basename(f).startsWith('sandbox-') && f.endsWith(suffix))!;
  files = { camt: pick('.camt053.xml'), csv: pick('.csv'), mt940: pick('.mt940') };
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('import idempotency on the simulator statements', () => {
  it('imports CAMT.053 once; the same file again, its CSV and its MT940 add nothing', async () => {
    const first = await importStatementFile(db, 'sandbox', files.camt);
    expect(first).toMatchObject({ format: 'camt053', alreadyImported: false });
    expect(first.linesNew).toBe(first.linesRead);
    expect(first.linesRead).toBeGreaterThan(20);
    expect(await importStatementFile(db, 'sandbox', files.camt)).toMatchObject({ alreadyImported: true, linesNew: 0, statementId: first.statementId });
    expect(await importStatementFile(db, 'sandbox', files.csv)).toMatchObject({ format: 'csv', alreadyImported: false, linesNew: 0, linesRead: first.linesRead });
    expect(await importStatementFile(db, 'sandbox', files.mt940)).toMatchObject({ format: 'mt940', alreadyImported: false, linesNew: 0, linesRead: first.linesRead });
    const [count] = await db.sql<{ n: number; statements: number }[]>`
      select (select count(*) from statement_lines)::int as n, (select count(*) from bank_statements)::int as statements`;
    expect(count).toEqual({ n: first.linesRead, statements: 3 });
  });
});

describe('payout reconciliation against the ground truth', () => {
  it('finds exactly the five payout kinds the simulator injected (precision and recall 1.0)', async () => {
    await runReconcilePass(
      {
        config: { PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: 3600, PAYOUT_SETTLEMENT_DAYS: SETTLEMENT_DAYS, PAYOUT_SOURCE_IBANS: [sim.bank.sandbox.providerIban] },
        log: silentLogger(),
        database: db,
        ...testMetrics(db),
      },
      new Date(Date.now() + 2 * 3600_000),
    );
    const truth = sim.groundTruth({ environment: 'sandbox' }).discrepancies.filter((d) => (PAYOUT_RULE_KINDS as readonly string[]).includes(d.kind));
    // A payout whose settlement window reaches past the imported statements cannot be judged yet
    // (the near miss of payout_not_on_statement): the truth is restricted to payouts it covers.
    const [cover] = await db.sql<{ to: string }[]>`select to_char(max(period_to) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as to from bank_statements`;
    const anchors = new Map(
      (await db.sql<{ uuid: string; at: string }[]>`select payout_uuid::text as uuid, min(event_time) as at from payout_events group by payout_uuid`).map((r) => [r.uuid, r.at]),
    );
    const judgeable = (d: ExpectedDiscrepancy) =>
      d.kind !== 'payout_not_on_statement' || Date.parse(anchors.get(d.entity_id)!) + SETTLEMENT_DAYS * DAY_MS <= Date.parse(cover!.to);
    const expected = truth.filter(judgeable);
    expect(truth.length - expected.length).toBeLessThanOrEqual(1);
    const key = (d: { kind: string; entity_type: string; entity_id: string; subject: string; expected: string | null; observed: string | null; sepa_reference: string | null }) =>
      [d.kind, d.entity_type, d.entity_id, d.subject, d.expected ?? '', d.observed ?? '', d.sepa_reference ?? ''].join('|');
    const found = await db.sql<{ kind: string; entity_type: string; entity_id: string; subject: string; expected: string | null; observed: string | null; sepa_reference: string | null }[]>`
      select kind::text, entity_type::text, entity_id, subject, expected, observed, sepa_reference from discrepancies
      where kind::text in ${db.sql(PAYOUT_RULE_KINDS as string[])} and status = 'open'`;
    expect(found.map(key).sort()).toEqual(expected.map(key).sort());
    for (const kind of PAYOUT_RULE_KINDS) expect(expected.filter((d) => d.kind === kind).length, kind).toBeGreaterThan(0);
    // The duplicate-SEPA payouts (duplicate_event, another rule) share one credit and cause none of ours.
    expect(sim.groundTruth({ environment: 'sandbox' }).discrepancies.some((d) => d.kind === 'duplicate_event' && d.entity_type === 'payout')).toBe(true);
  });

  it('report payouts names the matching bank line of every credited payout', async () => {
    const chunks: Buffer[] = [];
    const out = new Writable({ write(chunk, _enc, cb) { chunks.push(Buffer.from(chunk)); cb(); } });
    await streamPayoutsReport(db, { environment: 'sandbox' }, 'json', out);
    const rows = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payout_uuid: string; sepa_reference: string; status: string; matched_bank_line: string | null }[];
    const lines = await db.sql<{ sepa_reference: string; remittance: string | null; bank_reference: string; booking_date: string }[]>`
      select sepa_reference, remittance, bank_reference, booking_date::text from statement_lines where direction = 'credit'`;
    // A payout's reference stands in the line's reference or, for some bank lines, in its remittance text.
    const bySepa = new Map(lines.flatMap((l) => [l.sepa_reference, ...(l.remittance ?? '').split(' ')].map((ref) => [ref, `${l.bank_reference} ${l.booking_date}`] as const)));
    const truth = sim.groundTruth({ environment: 'sandbox' }).discrepancies;
    const noCredit = new Set(truth.filter((d) => d.kind === 'payout_not_on_statement').map((d) => d.sepa_reference));
    // A payout claiming a reference another payout was announced with first: the credit is that one's.
    const laterClaimants = new Set(truth.filter((d) => d.kind === 'duplicate_event' && d.entity_type === 'payout').map((d) => d.entity_id));
    let matched = 0;
    for (const row of rows) {
      if (laterClaimants.has(row.payout_uuid)) {
        expect(row.matched_bank_line ?? '', row.payout_uuid).toBe('');
        continue;
      }
      if (row.status === 'complete' && !noCredit.has(row.sepa_reference)) {
        expect(row.matched_bank_line, row.sepa_reference).toBe(bySepa.get(row.sepa_reference));
        matched += 1;
      }
      if (noCredit.has(row.sepa_reference)) expect(row.matched_bank_line ?? '').toBe('');
    }
    expect(matched).toBeGreaterThanOrEqual(3);
  });
});
