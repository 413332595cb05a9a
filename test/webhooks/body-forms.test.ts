import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { computeSignature } from '../../src/webhooks/signature.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';

let database: TestDatabase;
let receiver: TestReceiver;
beforeAll(async () => {
  database = await createTestDatabase('webhook_body_forms');
  receiver = await startTestReceiver(database);
});
afterAll(async () => {
  await receiver?.close();
});

describe('signed bodies in forms the spec does not show', () => {
  it('keeps a numeric *_cents member of bank_account as the number sent in the jsonb column', async () => {
    // An extra member of bank_account (the schemas are loose: "fields the spec does not show are
    // tolerated"), holding an amount as a JSON number.
    const body: Record<string, unknown> = { ...samplePayload('order/confirmed', 41), bank_account: { iban: 'DE89370400440532013000', fee_cents: 1234 } };
    const result = await postDelivery(receiver.url, JSON.stringify(body));
    expect(result.status).toBe(200);
    expect(result.body.parse_status).toBe('parsed');
    const [row] = await database.sql<{ fee: unknown }[]>`
      select bank_account -> 'fee_cents' as fee from order_events where event_time = ${body.event_time as string}`;
    // Not the NumberLiteral object classify.ts exactCents puts in place of a *_cents number ({"text": "1234"}).
    expect(row?.fee).toBe(1234);
  });

  it('stores a gzip-encoded signed JSON delivery, or refuses it with 415 naming the encoding', async () => {
    const json = Buffer.from(JSON.stringify(samplePayload('order/confirmed', 42)));
    const gz = gzipSync(json);
    // Signed over the raw request body as it travels (provider-api.md: "HMAC-SHA-256 digest of the
    // raw request body").
    const response = await request(receiver.url, {
      method: 'POST',
      body: gz,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-service-signature': computeSignature(gz, TEST_SECRET) },
    });
    const text = await response.body.text();
    // Refused naming the coding (not "body is not JSON"), so the log line points at the cause.
    if (response.statusCode === 200) {
      const [row] = await database.sql<{ n: number }[]>`select count(*)::int as n from order_events where event_time = ${'2026-11-20T10:00:00.000000042Z'}`;
      expect(row?.n).toBe(1);
    } else {
      expect(response.statusCode).toBe(415);
      expect(text).toMatch(/encoding/i);
    }
  });
});
