import { describe, expect, it } from 'vitest';
import { classifyDelivery, eventKey } from '../../src/webhooks/classify.js';
import { parseEventTime } from '../../src/webhooks/event-time.js';
import { cents } from '../../src/webhooks/money.js';
import { parseReferenceList } from '../../src/webhooks/reference-list.js';
import { ALL_TOPICS } from '../../src/provider/vocabulary.js';
import { samplePayload } from '../fixtures/spec-payloads.js';

const body = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('payload classification', () => {
  it.each(ALL_TOPICS.map((t) => [t]))('parses the spec sample of %s into a typed row', (topic) => {
    const result = classifyDelivery(body(samplePayload(topic)));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.status, result.error).toBe('parsed');
    expect(result.event?.entityType).toBe(topic.split('/')[0]);
    expect(result.event?.key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads amounts given as integer strings exactly and refuses anything else', () => {
    expect(cents.safeParse('9223372036854775807')).toEqual({ success: true, data: '9223372036854775807' });
    for (const bad of ['12.5', '1e3', '', ' 12', '012', '9223372036854775808', '+5', '0x10']) {
      expect(cents.safeParse(bad).success, bad).toBe(false);
    }
  });

  it('keeps gross_amount_cents as sent (a number) and refuses a fractional one', () => {
    const good = classifyDelivery(body(samplePayload('invoice/complete')));
    expect(good.ok && good.event?.typed.values.gross_amount_cents).toBe('119000');
    const bad = classifyDelivery(body({ ...samplePayload('invoice/complete'), gross_amount_cents: 12.5 }));
    expect(bad.ok && bad.status).toBe('invalid_shape');
    expect(bad.ok && bad.error).toContain('gross_amount_cents');
  });

  it('reads the exact digits of numeric *_cents members in one scan when a body has many', () => {
    // 60,000 numeric *_cents members before the one the ledger keeps: read member by member, each
    // a scan of the whole 1 MiB text, this took 22 s of the receiver's event loop.
    const { gross_amount_cents: _, ...rest } = samplePayload('invoice/complete') as Record<string, unknown>;
    const many = Array.from({ length: 60_000 }, (_, i) => `"k${i}_cents":${i}`).join(',');
    const text = `{${JSON.stringify(rest).slice(1, -1)},${many},"gross_amount_cents":123456789012345678}`;
    const started = performance.now();
    const result = classifyDelivery(Buffer.from(text));
    expect(performance.now() - started).toBeLessThan(3000);
    // Beyond a double's 53 bits: the digits as sent, not 123456789012345680.
    expect(result.ok && result.event?.typed.values.gross_amount_cents).toBe('123456789012345678');
  });

  it('refuses a fractional amount_cents string as a drifted shape, keeping the delivery', () => {
    const result = classifyDelivery(body({ ...samplePayload('payout/complete'), amount_cents: '12.5' }));
    expect(result).toMatchObject({ ok: true, status: 'invalid_shape', topic: 'payout/complete' });
  });

  it('stores unknown topics and non-objects with a status instead of refusing them', () => {
    expect(classifyDelivery(body({ topic: 'order/teleported', order_uuid: 'x' }))).toMatchObject({ ok: true, status: 'unknown_topic' });
    expect(classifyDelivery(body([1, 2]))).toMatchObject({ ok: true, status: 'invalid_shape' });
    expect(classifyDelivery(body({ no: 'topic' }))).toMatchObject({ ok: true, status: 'invalid_shape' });
    expect(classifyDelivery(Buffer.from('{"topic":'))).toMatchObject({ ok: false, reason: 'invalid_json' });
  });

  it('tolerates extra fields', () => {
    const result = classifyDelivery(body({ ...samplePayload('order/confirmed'), brand_new_field: { a: 1 } }));
    expect(result.ok && result.status).toBe('parsed');
  });

  it('reads the payout reference list from a comma string, a JSON string or an array', () => {
    expect(parseReferenceList('INV-1,INV-2')).toEqual(['INV-1', 'INV-2']);
    expect(parseReferenceList('["INV-1","INV-2"]')).toEqual(['INV-1', 'INV-2']);
    expect(parseReferenceList(['INV-3'])).toEqual(['INV-3']);
  });
});

describe('event time and identity', () => {
  it('orders two events inside one microsecond by their nanosecond digits', () => {
    const a = parseEventTime('2026-11-20T10:00:00.123456781Z');
    const b = parseEventTime('2026-11-20T10:00:00.123456789Z');
    const c = parseEventTime('2026-11-20T10:00:00.1234568Z');
    expect(a && b && c).toBeTruthy();
    expect([c?.sortable, b?.sortable, a?.sortable].sort()).toEqual([a?.sortable, b?.sortable, c?.sortable]);
    expect(a?.date.getTime()).toBe(b?.date.getTime()); // a Date cannot tell them apart
    expect(parseEventTime('2026-11-20T10:00:00Z')?.sortable).toBe('2026-11-20T10:00:00.000000000Z');
    expect(parseEventTime('2026-02-30T10:00:00Z')).toBeUndefined();
    expect(parseEventTime('2026-11-20 10:00:00Z')).toBeUndefined();
    expect(parseEventTime('2026-11-20T10:00:00.1234567891Z')).toBeUndefined();
  });

  it('gives a retry the same key and a second event for the same change a different one', () => {
    const first = samplePayload('order/confirmed', 1);
    const retry = Buffer.from(JSON.stringify(first));
    const again = classifyDelivery(retry);
    const original = classifyDelivery(body(first));
    const second = classifyDelivery(body(samplePayload('order/confirmed', 2)));
    expect(original.ok && again.ok && original.event?.key === again.event?.key).toBe(true);
    expect(original.ok && second.ok && original.event?.key !== second.event?.key).toBe(true);
    // Without event_time the exact bytes decide.
    const t = parseEventTime('2026-11-20T10:00:00Z');
    expect(eventKey('kyc/accepted', 'x', undefined, Buffer.from('a'))).not.toBe(eventKey('kyc/accepted', 'x', undefined, Buffer.from('b')));
    expect(eventKey('order/confirmed', 'x', t, Buffer.from('a'))).toBe(eventKey('order/confirmed', 'x', t, Buffer.from('b')));
  });
});
