import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, startOperatorServer } from '../http/operator-harness.js';
import type { HttpServer } from '../../src/http/server.js';
import { findings, importCsv, OTHER_IBAN, pass, payoutEvent } from '../statements/fixtures.js';

// docs/http-api.md: "Money is integer minor units end to end ... only plain decimal integers within 64
// bits are accepted ... and a number beyond 2^53 keeps its exact digits." docs/reports.md: "Amounts are
// decimal text (`120.50`) with their currency in the next column and the integer cents beside them";
// JSON cents and decimal amounts are "exact beyond 2^53". A payout of 19-digit cents is stored; its
// decimal amount must be those cents / 100, not rounded to whole euros by Postgres' numeric division
// (which keeps only 16 significant digits for `x::numeric / 100` once x >= 10^18); and the money at
// stake of a finding whose cents have 19 digits is that amount, not empty.

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

let db: TestDatabase;
let server: HttpServer;
const BIG = 9_223_372_036_854_775_807n;
const JUST = 1_234_567_890_123_456_789n;

beforeAll(async () => {
  db = await createTestDatabase('exact_amounts', { poolMax: 4 });
  server = await startOperatorServer(db);
  await payoutEvent(db, { uuid: '00000000-0000-4000-8000-000000000001', sepa: 'PO2026030200000001', cents: BIG, eventTime: day(2) });
  await payoutEvent(db, { uuid: '00000000-0000-4000-8000-000000000002', sepa: 'PO2026030200000002', cents: JUST, eventTime: day(2) });
  // A third, ordinary payout credited to the merchant's account makes it a known payout account; the
  // statement covers the big payouts' settlement window and credits neither.
  await payoutEvent(db, { uuid: '00000000-0000-4000-8000-000000000003', sepa: 'PO2026030200000003', cents: 50_000n, eventTime: day(2) });
  await importCsv(db, [
    { ref: 'B0', date: '2026-03-01', cents: 1_000n, sepa: 'RF000000000000', iban: OTHER_IBAN },
    { ref: 'B2', date: '2026-03-03', cents: 50_000n, sepa: 'PO2026030200000003' },
    { ref: 'B1', date: '2026-03-06', cents: 1_000n, sepa: 'RF000000000001', iban: OTHER_IBAN },
  ]);
  await pass(db, at(6));
});
afterAll(async () => { await server.close(); });

describe('amounts of 19-digit cents', () => {
  it('report payouts gives the decimal amount exactly (cents / 100), in JSON and CSV', async () => {
    const rows = JSON.parse((await call(`${server.url}/api/payouts`)).text) as Record<string, string>[];
    expect(rows.slice(0, 2).map((r) => [r.amount_cents, r.amount])).toEqual([
      ['9223372036854775807', '92233720368547758.07'],
      ['1234567890123456789', '12345678901234567.89'],
    ]);
    const csv = (await call(`${server.url}/api/payouts?format=csv`)).text;
    expect(csv).toContain(',9223372036854775807,92233720368547758.07,EUR,');
  });

  it('report discrepancies shows the payout as the money at stake of its payout_not_on_statement finding', async () => {
    expect((await findings(db, 'payout_not_on_statement')).map((f) => f.expected)).toEqual(['9223372036854775807', '1234567890123456789']);
    const rows = JSON.parse((await call(`${server.url}/api/discrepancies?kind=payout_not_on_statement`)).text) as Record<string, string>[];
    expect(rows.map((r) => [r.amount_cents, r.amount, r.currency])).toEqual([
      ['9223372036854775807', '92233720368547758.07', 'EUR'],
      ['1234567890123456789', '12345678901234567.89', 'EUR'],
    ]);
  });

  it('the overview sums them exactly as the money at stake, past the bigint range', async () => {
    const overview = JSON.parse((await call(`${server.url}/api/overview`)).text) as { at_stake: Record<string, unknown>[] };
    // 9223372036854775807 + 1234567890123456789 = 10457939926978232596 cents, more than a bigint holds.
    expect(overview.at_stake).toEqual([
      { kind: 'payout_not_on_statement', currency: 'EUR', amount_cents: '10457939926978232596', amount: '104579399269782325.96', findings: 2 },
    ]);
  });
});
