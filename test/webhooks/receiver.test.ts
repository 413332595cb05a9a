import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeSignature } from '../../src/webhooks/signature.js';
import { ALL_TOPICS } from '../../src/provider/vocabulary.js';
import { samplePayload, ORDER_UUID } from '../fixtures/spec-payloads.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';

let database: TestDatabase;
let receiver: TestReceiver;

beforeAll(async () => {
  database = await createTestDatabase('receiver');
  receiver = await startTestReceiver(database);
});
afterAll(async () => {
  await receiver?.close();
});

const TYPED_TABLE: Record<string, string> = {
  order: 'order_events',
  invoice: 'invoice_events',
  payout: 'payout_events',
  buyer: 'buyer_events',
  kyc: 'kyc_events',
  applicant: 'applicant_events',
  factoring: 'factoring_events',
  billing_configuration: 'billing_configuration_events',
};

describe('POST /webhooks', () => {
  it('stores every topic of the spec as a delivery, an event and a typed row', async () => {
    for (const topic of ALL_TOPICS) {
      const raw = JSON.stringify(samplePayload(topic, 7));
      const result = await postDelivery(receiver.url, raw);
      expect(result.status, topic).toBe(200);
      expect(result.body).toMatchObject({ status: 'stored', duplicate: false, parse_status: 'parsed' });
      const [delivery] = await database.sql`select raw_body, topic, parse_status, event_key from webhook_deliveries where id = ${result.body.delivery_id as number}`;
      expect(Buffer.from(delivery?.raw_body as Buffer).toString()).toBe(raw);
      const family = topic.split('/')[0] as string;
      const rows = await database.sql`select * from ${database.sql(TYPED_TABLE[family] as string)} where event_key = ${delivery?.event_key as string}`;
      expect(rows, topic).toHaveLength(1);
      expect(rows[0]?.topic).toBe(topic);
    }
    const [order] = await database.sql`select order_state, event_time, event_time_sortable, net_term_days, buyer_uuid from order_events where topic = 'order/confirmed'`;
    expect(order).toMatchObject({ order_state: 'confirmed', event_time: '2026-11-20T10:00:00.000000007Z', event_time_sortable: '2026-11-20T10:00:00.000000007Z', net_term_days: 30 });
    const [payout] = await database.sql`select amount_cents, external_reference_ids, status from payout_events where topic = 'payout/complete'`;
    expect(payout).toMatchObject({ amount_cents: '1180450', external_reference_ids: ['INV-1001', 'INV-1002'], status: 'complete' });
    const [invoice] = await database.sql`select gross_amount_cents from invoice_events where topic = 'invoice/complete'`;
    expect(invoice?.gross_amount_cents).toBe('119000');
    const [limits] = await database.sql`select purchasing_limit_cents, balance_cents from buyer_events where topic = 'buyer/limit_updated'`;
    expect(limits).toMatchObject({ purchasing_limit_cents: '5000000', balance_cents: '1200000' });
    const [factoring] = await database.sql`select payment_terms_days, invoice_amount_cents from factoring_events where topic = 'factoring/approved'`;
    expect(factoring).toMatchObject({ payment_terms_days: 30, invoice_amount_cents: '119000' });
  });

  it('answers every bad input with its code and stores none of them', async () => {
    const before = await database.sql`select count(*)::int as n from webhook_deliveries`;
    const good = JSON.stringify(samplePayload('order/pending', 11));
    expect((await postDelivery(receiver.url, good, { signature: null })).status).toBe(401);
    expect((await postDelivery(receiver.url, good, { secret: 'wrong' })).status).toBe(401);
    const tampered = good.replace('pending', 'pendinG');
    expect((await postDelivery(receiver.url, tampered, { signature: computeSignature(Buffer.from(good), TEST_SECRET) })).status).toBe(401);
    expect((await postDelivery(receiver.url, '{"topic": "order/confirmed",')).status).toBe(400);
    const huge = JSON.stringify({ topic: 'order/confirmed', pad: 'x'.repeat(1024 * 1024) });
    expect((await postDelivery(receiver.url, huge)).status).toBe(413);
    const after = await database.sql`select count(*)::int as n from webhook_deliveries`;
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('stores unknown topics and drifted shapes with their parse status and answers 2xx', async () => {
    const unknown = await postDelivery(receiver.url, JSON.stringify({ topic: 'order/teleported', order_uuid: ORDER_UUID }));
    expect(unknown).toMatchObject({ status: 200, body: { parse_status: 'unknown_topic' } });
    const drifted = await postDelivery(receiver.url, JSON.stringify({ ...samplePayload('payout/complete', 3), amount_cents: 1180450.5 }));
    expect(drifted).toMatchObject({ status: 200, body: { parse_status: 'invalid_shape' } });
    const rows = await database.sql`select parse_status, parse_error, event_key from webhook_deliveries where id in ${database.sql([unknown.body.delivery_id as number, drifted.body.delivery_id as number])} order by id`;
    expect(rows.map((r) => r.parse_status)).toEqual(['unknown_topic', 'invalid_shape']);
    expect(rows[1]?.parse_error).toContain('amount_cents');
    expect(rows.every((r) => r.event_key === null)).toBe(true);
  });

  it('applies 200 concurrent deliveries of one event once and records 199 duplicates', async () => {
    const raw = JSON.stringify(samplePayload('order/declined', 42));
    const results = await Promise.all(Array.from({ length: 200 }, () => postDelivery(receiver.url, raw)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    const [counts] = await database.sql`
      select (select count(*)::int from webhook_deliveries d where d.raw_body = ${Buffer.from(raw)}) as deliveries,
             (select count(*)::int from webhook_deliveries e where e.applied and e.topic = 'order/declined' and e.event_time = '2026-11-20T10:00:00.000000042Z') as events,
             (select count(*)::int from order_events o where o.order_state = 'declined' and o.event_time = '2026-11-20T10:00:00.000000042Z') as typed`;
    expect(counts).toEqual({ deliveries: 200, events: 1, typed: 1 });
    // The one delivery the ledger marks applied is the one answered as not a duplicate; the
    // others share its event key.
    const applied = await database.sql<{ id: number }[]>`
      select id::int as id from webhook_deliveries where raw_body = ${Buffer.from(raw)} and applied`;
    expect(applied).toHaveLength(1);
    expect(results.find((r) => r.body.duplicate === false)?.body.delivery_id).toBe(applied[0]?.id);
    const keys = await database.sql`select distinct event_key from webhook_deliveries where raw_body = ${Buffer.from(raw)}`;
    expect(keys).toHaveLength(1);
  });

  it('keeps a second distinct event for the same change apart from retries', async () => {
    const first = await postDelivery(receiver.url, JSON.stringify(samplePayload('order/authorized', 100)));
    const second = await postDelivery(receiver.url, JSON.stringify(samplePayload('order/authorized', 101)));
    expect(first.body.duplicate).toBe(false);
    expect(second.body.duplicate).toBe(false);
    const rows = await database.sql`
      select event_time_sortable from order_events
      where order_state = 'authorized' and event_time_sortable >= '2026-11-20T10:00:00.000000100Z' order by event_time_sortable`;
    expect(rows.map((r) => r.event_time_sortable)).toEqual(['2026-11-20T10:00:00.000000100Z', '2026-11-20T10:00:00.000000101Z']);
  });
});

describe('source addresses and fetched secrets', () => {
  it('refuses a source outside the allowlist with 403 and believes X-Forwarded-For only from trusted proxies', async () => {
    const raw = JSON.stringify(samplePayload('order/confirmed', 500));
    const strict = await startTestReceiver(database, { WEBHOOK_ALLOWED_IPS: 'spec', PROVIDER_ENV: 'production' });
    const proxied = await startTestReceiver(database, { WEBHOOK_ALLOWED_IPS: '3.68.36.187', TRUSTED_PROXIES: '127.0.0.1' });
    try {
      expect((await postDelivery(strict.url, raw)).status).toBe(403);
      // Not a trusted proxy: the header is ignored, 127.0.0.1 is refused.
      expect((await postDelivery(strict.url, raw, { headers: { 'x-forwarded-for': '3.68.36.187' } })).status).toBe(403);
      expect((await postDelivery(proxied.url, raw, { headers: { 'x-forwarded-for': '3.68.36.187' } })).status).toBe(200);
      expect((await postDelivery(proxied.url, raw, { headers: { 'x-forwarded-for': '3.68.36.187, 9.9.9.9' } })).status).toBe(403);
      const [row] = await database.sql`select source_ip from webhook_deliveries where raw_body = ${Buffer.from(raw)}`;
      expect(row?.source_ip).toBe('3.68.36.187');
    } finally {
      await strict.close();
      await proxied.close();
    }
  });

  it('fetches secrets from the provider, refetches once after a failed check, and not on every forged request', async () => {
    let served = 'first-secret';
    let fetches = 0;
    const keys = createServer((req, res) => {
      fetches += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ webhook_secret: served }));
    });
    await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
    const keysUrl = `http://127.0.0.1:${(keys.address() as AddressInfo).port}/webhooks/keys`;
    const fetchSecrets = async () => {
      const { request } = await import('undici');
      const response = await request(keysUrl);
      return [((await response.body.json()) as { webhook_secret: string }).webhook_secret];
    };
    const fetched = await startTestReceiver(database, { WEBHOOK_SECRET: '', WEBHOOK_KEYS_MIN_REFETCH_SECONDS: '3600' }, { fetchSecrets });
    try {
      expect(fetches).toBe(1);
      const raw = JSON.stringify(samplePayload('order/canceled', 600));
      expect((await postDelivery(fetched.url, raw, { secret: 'first-secret' })).status).toBe(200);
      // Rotation: the provider now signs with a new secret; the first failed check triggers one refetch...
      served = 'rotated-secret';
      // ...but the minimum interval starts from the startup fetch, so we need a receiver that allows it.
      const forged = await Promise.all(Array.from({ length: 20 }, () => postDelivery(fetched.url, raw, { secret: 'forged' })));
      expect(forged.every((r) => r.status === 401)).toBe(true);
      expect(fetches).toBe(1); // rate-limited: forged requests did not reach the provider
    } finally {
      await fetched.close();
    }
    const eager = await startTestReceiver(database, { WEBHOOK_SECRET: '', WEBHOOK_KEYS_MIN_REFETCH_SECONDS: '1' }, { fetchSecrets });
    try {
      const before = fetches;
      await new Promise((r) => setTimeout(r, 1100));
      served = 'rotated-again';
      const raw = JSON.stringify(samplePayload('order/canceled', 601));
      expect((await postDelivery(eager.url, raw, { secret: 'rotated-again' })).status).toBe(200);
      expect(fetches).toBe(before + 1);
      // The previous secret still verifies (deliveries signed before the rotation are still retried).
      expect((await postDelivery(eager.url, JSON.stringify(samplePayload('order/canceled', 602)), { secret: 'rotated-secret' })).status).toBe(200);
    } finally {
      await eager.close();
      keys.close();
    }
  });
});
