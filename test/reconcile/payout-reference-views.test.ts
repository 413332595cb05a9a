import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { importStatement } from '../../src/statements/import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { findings, MERCHANT_IBAN, OTHER_IBAN, pass, payoutEvent, PROVIDER_IBAN } from '../statements/fixtures.js';
import { call, startOperatorServer } from '../http/operator-harness.js';

/**
 * CHANGELOG (Unreleased): "a SEPA reference is compared in any case and without blanks around it
 * everywhere" and "A payout cancelled with a blank reference after its credit is
 * payout_cancelled_but_credited (the reference of its earlier event counts)". http-api.md:
 * GET /api/discrepancies/{id} gives "the evidence: ... bank lines".
 */
const HEAD = 'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban';
const row = (ref: string, date: string, amount: string, iban: string, e2e: string, text: string) =>
  [ref, date, date, amount.replace('-', ''), 'EUR', amount.startsWith('-') ? 'DBIT' : 'CRDT', 'Party', iban, e2e, `"${text}"`, MERCHANT_IBAN].join(',');
const T = (day: number, time = '06:00:00') => `2026-03-${String(day).padStart(2, '0')}T${time}.000000000Z`;

let db: TestDatabase;
let server: HttpServer;
let cancelled: string;
let blanked: string;
beforeAll(async () => {
  db = await createTestDatabase('payout_reference_views');
  server = await startOperatorServer(db);
  // A payout whose reference the provider sent with a blank before it, credited 100.00 short.
  blanked = await payoutEvent(db, { sepa: ' PO2026030200000002', cents: 50_000n, eventTime: T(2) });
  // A payout credited, then cancelled by a payout/cancelled naming no reference.
  cancelled = await payoutEvent(db, { sepa: 'PO2026030200000001', cents: 100_000n, eventTime: T(2) });
  await importStatement(db, 'sandbox', Buffer.from(`${[HEAD,
    row('C0', '2026-03-01', '1.00', OTHER_IBAN, '', 'Miete'),
    row('B1', '2026-03-03', '1000.00', PROVIDER_IBAN, 'PO2026030200000001', 'Auszahlung'),
    row('B2', '2026-03-03', '400.00', PROVIDER_IBAN, 'PO2026030200000002', 'Auszahlung'),
    row('C9', '2026-03-06', '2.00', OTHER_IBAN, '', 'Miete'),
  ].join('\r\n')}\r\n`), 'refs.csv');
  await db.sql`
    insert into payout_events (environment, event_key, topic, received_at, payout_uuid, status, sepa_instruction_id, amount_cents,
                               external_reference_ids, event_time, event_time_sortable)
    values ('sandbox', 'cancel-key', 'payout/cancelled', '2026-03-04T06:00:00Z', ${cancelled}, 'cancelled', null, 100000, '{}',
            '2026-03-04T06:00:00.000000000Z', '2026-03-04T06:00:00.000000000Z')`;
  await pass(db, new Date('2026-03-09T12:00:00Z'), { accounts: [MERCHANT_IBAN] });
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

async function detailLines(kind: string, entity: string): Promise<string[]> {
  const rows = JSON.parse((await call(`${server.url}/api/discrepancies?kind=${kind}`)).text) as { id: number; entity_id: string }[];
  const mine = rows.find((r) => r.entity_id === entity);
  expect(mine, `a ${kind} finding of ${entity}`).toBeDefined();
  const detail = JSON.parse((await call(`${server.url}/api/discrepancies/${mine!.id}`)).text) as { bank_lines: { bank_reference: string }[] };
  return detail.bank_lines.map((l) => l.bank_reference);
}

describe('payout_cancelled_but_credited of a cancellation naming no reference', () => {
  it('names the reference the credit carries (sepa_reference, details) and its evidence lists that credit', async () => {
    const [f] = (await findings(db, 'payout_cancelled_but_credited')).filter((x) => x.entity_id === cancelled);
    expect(f, 'the finding the CHANGELOG promises').toBeDefined();
    expect.soft(f!.sepa_reference, 'the finding names no SEPA reference').toBe('PO2026030200000001');
    expect(await detailLines('payout_cancelled_but_credited', cancelled), 'the evidence shows no bank line').toEqual(['B1']);
  });
});

describe('payout_amount_mismatch of a payout whose reference came with a blank before it', () => {
  it('its evidence lists the bank credit the finding is about', async () => {
    const [f] = (await findings(db, 'payout_amount_mismatch')).filter((x) => x.entity_id === blanked);
    expect(f, 'the rule matched the credit (sepaKey)').toBeDefined();
    expect(f!.observed).toBe('40000');
    expect(await detailLines('payout_amount_mismatch', blanked), 'the evidence shows no bank line').toEqual(['B2']);
  });
});
