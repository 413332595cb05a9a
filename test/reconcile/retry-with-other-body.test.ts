import { describe, expect, it } from 'vitest';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { postDelivery, startTestReceiver } from '../helpers/receiver.js';
import { pass } from './fixtures.js';
import { databasePerTest } from './helpers.js';

const withDb = databasePerTest('retry_body');

/**
 * An event's key is (topic, entity, event_time). A delivery with that key and other values is not
 * a retry: it was recorded as one ("repeats event ...; stored, not applied again", resolved), so a
 * provider announcing other facts for one event went unseen. Through the real receiver.
 */
describe('a delivery of an applied event with another body', () => {
  it('is recorded open, naming the members that differ; the same JSON reformatted stays a resolved retry', withDb(async (db) => {
    const receiver = await startTestReceiver(db);
    try {
      const applied = samplePayload('payout/complete', 1);
      expect((await postDelivery(receiver.url, JSON.stringify(applied))).status).toBe(200);
      // A retry written otherwise: members in reverse order, indented.
      const reformatted = Object.fromEntries(Object.entries(applied).reverse());
      expect((await postDelivery(receiver.url, JSON.stringify(reformatted, null, 2))).status).toBe(200);
      // The same topic, payout and event_time, another amount and SEPA reference.
      const other = { ...applied, amount_cents: '99', sepa_instruction_id: 'PO-OTHER' };
      expect((await postDelivery(receiver.url, JSON.stringify(other))).status).toBe(200);
    } finally {
      await receiver.close();
    }
    const stored = await db.sql<{ n: number; keys: number; applied: number }[]>`
      select count(*)::int as n, count(distinct event_key)::int as keys, count(*) filter (where applied)::int as applied from webhook_deliveries`;
    expect(stored).toEqual([{ n: 3, keys: 1, applied: 1 }]);

    const summary = await pass(db, new Date());
    expect(summary.duplicateDeliveries).toBe(2);
    const rows = await db.sql<{ status: string; resolved_at: Date | null; details: string; members: string | null; history: string }[]>`
      select d.status::text, d.resolved_at, d.details, d.evidence->>'differing_members' as members,
             (select string_agg(h.to_status::text || ': ' || h.reason, '; ') from discrepancy_history h where h.discrepancy_id = d.id) as history
      from discrepancies d where d.kind = 'duplicate_delivery' order by d.entity_id::bigint`;
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ status: 'resolved', members: null, history: 'resolved: duplicate delivery of an applied event: recorded already resolved' });
    expect(rows[0]!.details).toMatch(/^Delivery \d+ repeats event /);
    expect(rows[1]).toMatchObject({ status: 'open', resolved_at: null, members: 'amount_cents, sepa_instruction_id', history: 'open: a delivery of an applied event with another body: recorded open' });
    expect(rows[1]!.details).toMatch(/^Delivery \d+ carries event \w+ \(payout\/complete payout \S+\) of delivery \d+, which was applied, but its body differs in amount_cents, sepa_instruction_id: stored, not applied; the applied delivery's values stand\./);

    // Nothing resolves it, and a later pass writes nothing again.
    const later = await pass(db, new Date(Date.now() + 1000), 'sandbox', { full: true });
    expect(later.duplicateDeliveries).toBe(0);
    expect((await db.sql<{ status: string }[]>`select status::text from discrepancies where kind = 'duplicate_delivery' order by entity_id::bigint`).map((r) => r.status)).toEqual(['resolved', 'open']);
  }));

  // provider-api.md: "gross_amount_cents in invoice/complete is sent as a number"; the receiver keeps
  // its digits beyond 2^53 (webhooks/money.ts), where JSON.parse reads ...993 and ...992 as one double.
  it('names an amount that differs beyond 2^53, which the ledger keeps by its digits', withDb(async (db) => {
    const receiver = await startTestReceiver(db);
    const body = JSON.stringify(samplePayload('invoice/complete', 1));
    const applied = body.replace('"gross_amount_cents":119000', '"gross_amount_cents":9007199254740993');
    const other = body.replace('"gross_amount_cents":119000', '"gross_amount_cents":9007199254740992');
    expect(applied).not.toBe(body);
    try {
      expect((await postDelivery(receiver.url, applied)).status).toBe(200);
      expect((await postDelivery(receiver.url, other)).status).toBe(200);
    } finally {
      await receiver.close();
    }
    expect(await db.sql`select gross_amount_cents::text as gross from invoice_events`).toEqual([{ gross: '9007199254740993' }]);
    await pass(db, new Date());
    expect(await db.sql`select status::text, evidence->>'differing_members' as members from discrepancies where kind = 'duplicate_delivery'`)
      .toEqual([{ status: 'open', members: 'gross_amount_cents' }]);
  }));
});
