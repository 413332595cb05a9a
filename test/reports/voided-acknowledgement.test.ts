import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, startOperatorServer } from '../http/operator-harness.js';
import type { HttpServer } from '../../src/http/server.js';
import { findings, importCsv, OTHER_IBAN, pass, payoutEvent } from '../statements/fixtures.js';

// docs/reports.md: `acknowledged_by, acknowledged_at, ack_note` are "empty while a finding is open: an
// acknowledgement that new evidence reopened is kept in the finding's history, not shown on its row".
// A finding acknowledged, reopened by new evidence (the acknowledgement voided), then resolved must
// not show the voided acknowledgement on its row as if it still stood.

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

let db: TestDatabase;
let server: HttpServer;
let id = 0;

beforeAll(async () => {
  db = await createTestDatabase('voided_ack', { poolMax: 4 });
  server = await startOperatorServer(db);
  await payoutEvent(db, { sepa: 'PO2026030200000020', cents: 100_000n, eventTime: day(2) });
  await importCsv(db, [
    { ref: 'D1', date: '2026-03-02', cents: 99_950n, sepa: 'PO2026030200000020' },
    { ref: 'D9', date: '2026-03-05', cents: 1_000n, sepa: 'RF000000000009', iban: OTHER_IBAN },
  ], 'a.csv');
  await pass(db, at(5));
  const [row] = await db.sql<{ id: string }[]>`select id::text from discrepancies where kind = 'payout_amount_mismatch'`;
  id = Number(row!.id);
});
afterAll(async () => { await server.close(); });

describe('a voided acknowledgement on a later resolved finding', () => {
  it('is not shown on the resolved row once new evidence reopened the finding', async () => {
    const ack = await call(`${server.url}/api/discrepancies/${id}/ack`, { method: 'POST', body: JSON.stringify({ note: 'bank fee, fine' }) });
    expect(ack.status, ack.text).toBe(200);
    // New evidence (another 20 cents credited): the acknowledgement no longer holds, the finding reopens.
    await importCsv(db, [{ ref: 'D6', date: '2026-03-06', cents: 20n, sepa: 'PO2026030200000020' }], 'b.csv');
    await pass(db, at(6));
    expect((await findings(db, 'payout_amount_mismatch')).map((f) => f.status)).toEqual(['open']);
    const open = JSON.parse((await call(`${server.url}/api/discrepancies?status=all`)).text) as Record<string, unknown>[];
    expect(open.find((r) => r.id === id)).toMatchObject({ status: 'open', acknowledged_by: null, ack_note: null });
    // The rest arrives: the finding is resolved by the machine, never acknowledged again.
    await importCsv(db, [{ ref: 'D7', date: '2026-03-07', cents: 30n, sepa: 'PO2026030200000020' }], 'c.csv');
    await pass(db, at(7));
    expect((await findings(db, 'payout_amount_mismatch')).map((f) => f.status)).toEqual(['resolved']);
    const rows = JSON.parse((await call(`${server.url}/api/discrepancies?status=all`)).text) as Record<string, unknown>[];
    const row = rows.find((r) => r.id === id)!;
    expect(row.status).toBe('resolved');
    expect({ acknowledged_by: row.acknowledged_by, acknowledged_at: row.acknowledged_at, ack_note: row.ack_note })
      .toEqual({ acknowledged_by: null, acknowledged_at: null, ack_note: null });
  });
});
