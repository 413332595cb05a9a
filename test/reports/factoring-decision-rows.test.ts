import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { ageingSource, invoicesSource } from '../../src/reports/invoices.js';
import { decodeCursor, fetchAll, fetchPage } from '../../src/reports/source.js';
import { classifyDelivery, type StorableClassification } from '../../src/webhooks/classify.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { pass } from '../payout-reports/fixtures.js';

/**
 * "Which invoices are still waiting for money": the invoices report and the ageing must say what
 * the pass says (invoice_not_paid_out). Deliveries go through the receiver's own classification and
 * writer. provider-api.md: factoring/pending is manual review, before the decision; a pending whose
 * first delivery failed arrives after the decision by its retry. factoring/approved adds invoice_uuid.
 */
const DAY = 86_400_000;
const now = Date.now();
const iso = (t: number) => new Date(t).toISOString();

async function deliver(database: Database, payload: Record<string, unknown>, receivedAt: Date): Promise<void> {
  const body = Buffer.from(JSON.stringify(payload));
  const c = classifyDelivery(body);
  if (!c.ok || c.status !== 'parsed') throw new Error(`fixture does not parse: ${JSON.stringify(c)}`);
  const [written] = await writeDeliveries(database.sql, [{
    deliveryUuid: randomUUID(), environment: 'sandbox', receivedAt, sourceIp: '127.0.0.1',
    headers: { 'content-type': 'application/json' }, rawBody: body, keyFingerprint: null, classification: c as StorableClassification,
  }]);
  if (!written?.applied) throw new Error('delivery not applied');
}

/** An invoice created 20 days ago, its factoring decision an hour later, and the retried pending an hour after that. */
async function decidedThenRetriedPending(database: Database, ref: string, cents: string, decision: 'factoring/approved' | 'factoring/declined'): Promise<string> {
  const uuid = randomUUID();
  const t = now - 20 * DAY;
  await deliver(database, { topic: 'invoice/created', invoice_uuid: uuid, order_uuid: randomUUID(), external_reference_id: ref, event_time: iso(t) }, new Date(t));
  const factoring = { factoring_uuid: randomUUID(), invoice_external_reference_id: ref, invoice_amount_cents: cents, payment_method: 'bank_transfer', payment_terms: '30' };
  const approved = decision === 'factoring/approved';
  await deliver(database, { topic: decision, ...factoring, factoring_state: approved ? 'approved' : 'declined', ...(approved ? { invoice_uuid: uuid } : {}) }, new Date(t + 3_600_000));
  await deliver(database, { topic: 'factoring/pending', ...factoring, factoring_state: 'manual_review' }, new Date(t + 7_200_000));
  return uuid;
}

async function waiting(database: Database): Promise<{ invoices: number; cents: bigint }> {
  const buckets = (await fetchAll(ageingSource(database, { environment: 'sandbox', now: new Date(now) }), undefined, 10)) ?? [];
  return { invoices: buckets.reduce((n, b) => n + Number(b['invoices']), 0), cents: buckets.reduce((n, b) => n + BigInt(String(b['amount_cents'])), 0n) };
}

describe('a factoring decision followed by a retried factoring/pending', () => {
  let db: TestDatabase;
  useTestDatabase('report_factoring_decision_first', (d) => (db = d));

  it('shows an approved invoice as approved in the invoices report, as the pass judges it', async () => {
    const uuid = await decidedThenRetriedPending(db, 'DEC-APPROVED-1', '50000', 'factoring/approved');
    await pass(db, new Date(now));
    const owed = await db.sql`select entity_id from discrepancies where kind = 'invoice_not_paid_out' and status = 'open'`;
    expect(owed.map((r) => r['entity_id'])).toEqual([uuid]);
    const rows = (await fetchAll(invoicesSource(db, { environment: 'sandbox' }), undefined, 100)) ?? [];
    expect(rows.find((r) => r['invoice_uuid'] === uuid)?.['factoring_state']).toBe('approved');
  });

  it('does not count a declined invoice as waiting for money in the ageing', async () => {
    const declined = await decidedThenRetriedPending(db, 'DEC-DECLINED-1', '70000', 'factoring/declined');
    const rows = (await fetchAll(invoicesSource(db, { environment: 'sandbox' }), undefined, 100)) ?? [];
    expect(rows.find((r) => r['invoice_uuid'] === declined)?.['factoring_state']).toBe('declined');
    // Only the approved invoice of the test before (500.00) waits.
    expect(await waiting(db)).toEqual({ invoices: 1, cents: 50_000n });
  });
});

describe('an approved invoice whose invoice/created never arrived', () => {
  let db: TestDatabase;
  useTestDatabase('report_factored_only', (d) => (db = d));

  it('is waiting in the ageing and listed by the invoices report, as the pass owes it', async () => {
    const factoredOnly = randomUUID();
    await deliver(db, {
      topic: 'factoring/approved', factoring_uuid: randomUUID(), invoice_external_reference_id: 'FACTORED-ONLY-1', invoice_uuid: factoredOnly,
      factoring_state: 'approved', invoice_amount_cents: '123456', payment_method: 'bank_transfer', payment_terms: '30',
    }, new Date(now - 12 * DAY));
    // Invoices with their events on either side of it in uuid order, so paging interleaves the two kinds.
    const others: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const uuid = randomUUID();
      const t = now - 15 * DAY;
      await deliver(db, { topic: 'invoice/created', invoice_uuid: uuid, order_uuid: randomUUID(), external_reference_id: `WITH-EVENT-${i}`, event_time: iso(t) }, new Date(t));
      others.push(uuid);
    }
    await pass(db, new Date(now));
    const owed = await db.sql`select entity_id, expected from discrepancies where kind = 'invoice_not_paid_out' and status = 'open' and entity_id = ${factoredOnly}`;
    expect(owed.map((r) => [r['entity_id'], r['expected']])).toEqual([[factoredOnly, '123456']]);

    // The four with invoice events add nothing (no amount known yet) but count.
    expect(await waiting(db)).toEqual({ invoices: 5, cents: 123_456n });

    const whole = (await fetchAll(invoicesSource(db, { environment: 'sandbox' }), undefined, 100)) ?? [];
    const row = whole.find((r) => r['invoice_uuid'] === factoredOnly);
    expect(row).toMatchObject({ reference: 'FACTORED-ONLY-1', factoring_state: 'approved', amount_cents: '123456', amount: '1234.56', invoice_date: null, order_uuid: null });
    expect(whole.map((r) => r['invoice_uuid'])).toEqual([factoredOnly, ...others].sort());

    // Two rows a page, as the API pages: every invoice once, in uuid order.
    const paged: unknown[] = [];
    const source = invoicesSource(db, { environment: 'sandbox' });
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages += 1) {
      const page = await fetchPage(source, after, 2);
      paged.push(...page.rows.map((r) => r['invoice_uuid']));
      if (page.next === undefined) break;
      after = decodeCursor(page.next, /^[0-9a-f-]{36}$/);
    }
    expect(paged).toEqual([factoredOnly, ...others].sort());
  });
});
