import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/config/usage-error.js';
import { DISCREPANCY_COLUMNS, parseDiscrepancyQuery, streamDiscrepancies } from '../../src/reports/discrepancies.js';
import { ORDER_COLUMNS, streamOrdersReport } from '../../src/reports/orders.js';
import { PAYOUT_COLUMNS, streamPayoutsReport } from '../../src/reports/payouts.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { GRACE, at, eventTime, orderEvent, pass, pollRun, retryOf, snapshot } from '../reconcile/fixtures.js';
import { parseCsv } from './csv-reader.js';

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

async function report(run: (out: Writable) => Promise<unknown>): Promise<string> {
  const out = new Collect();
  await run(out);
  return out.text;
}

describe('reports', () => {
  let db: TestDatabase;
  const awkward = randomUUID();
  const plain = randomUUID();
  beforeAll(async () => {
    db = await createTestDatabase('reports', { poolMax: 4 });
    const run = await pollRun(db, at(0));
    await snapshot(db, { order: awkward, state: 'confirmed', seenAt: at(0), runId: run, externalReferenceId: 'ref, "quoted"\nline2' });
    await snapshot(db, { order: plain, state: 'shipped', seenAt: at(0), runId: run, externalReferenceId: 'plain-ref' });
    const e = await orderEvent(db, { order: plain, state: 'confirmed', eventTime: eventTime(-10, 123_456_789), receivedAt: at(-9) });
    await orderEvent(db, { order: plain, state: 'authorized', eventTime: eventTime(-10, 123_456_788), receivedAt: at(-8) });
    await retryOf(db, e.eventKey, at(-7));
    await orderEvent(db, { order: randomUUID(), state: 'pending', eventTime: eventTime(1), receivedAt: at(2), env: 'production' });
    await pass(db, at(2 * GRACE));
  });
  afterAll(async () => {
  });

  it('writes the discrepancy report as CSV with the contract columns and RFC 4180 quoting', async () => {
    const text = await report((out) => streamDiscrepancies(db, { status: 'all' }, 'csv', out));
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual([...DISCREPANCY_COLUMNS]);
    const byKind = Object.fromEntries(rows.map((r) => [r[1], r]));
    expect(Object.keys(byKind).sort()).toEqual(['duplicate_delivery', 'missed_webhook']);
    const missed = byKind.missed_webhook!;
    expect(missed[5]).toBe(awkward);
    expect(missed[6]).toBe('ref, "quoted"\nline2');
    expect(missed[11]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(byKind.duplicate_delivery![2]).toBe('resolved');
    expect(byKind.duplicate_delivery![13]).not.toBe('');
    // The default status filter hides the duplicate delivery, created already resolved.
    const open = parseCsv(await report((out) => streamDiscrepancies(db, parseDiscrepancyQuery({}).filters, 'csv', out)));
    expect(open.slice(1).map((r) => r[1])).toEqual(['missed_webhook']);
  });

  it('writes valid JSON with the same fields, and applies kind, status, since and env filters', async () => {
    const json = JSON.parse(await report((out) => streamDiscrepancies(db, { status: 'all', kinds: ['duplicate_delivery'] }, 'json', out))) as Record<string, unknown>[];
    expect(json).toHaveLength(1);
    expect(Object.keys(json[0]!)).toEqual([...DISCREPANCY_COLUMNS]);
    expect(typeof json[0]!.id).toBe('number');
    expect(json[0]!.entity_type).toBe('webhook_delivery');
    const none = await report((out) => streamDiscrepancies(db, { status: 'all', since: new Date(Date.now() + 86_400_000).toISOString() }, 'json', out));
    expect(JSON.parse(none)).toEqual([]);
    const prod = await report((out) => streamDiscrepancies(db, { status: 'all', environment: 'production' }, 'json', out));
    expect(JSON.parse(prod)).toEqual([]);
    const acked = await report((out) => streamDiscrepancies(db, { status: 'acknowledged' }, 'csv', out));
    expect(parseCsv(acked)).toHaveLength(1);
  });

  it('validates report filters with usage errors', () => {
    expect(() => parseDiscrepancyQuery({ status: 'closed' })).toThrow(UsageError);
    expect(() => parseDiscrepancyQuery({ kind: ['missed_webhook', 'nope'] })).toThrow(/unknown --kind 'nope'/);
    expect(() => parseDiscrepancyQuery({ since: 'yesterday' })).toThrow(UsageError);
    expect(() => parseDiscrepancyQuery({ env: 'staging' })).toThrow(UsageError);
    expect(() => parseDiscrepancyQuery({ format: 'xml' })).toThrow(UsageError);
    expect(parseDiscrepancyQuery({ kind: 'orphan_webhook', since: '2026-01-01', env: 'production', format: 'json' })).toMatchObject({
      format: 'json', filters: { status: 'open', kinds: ['orphan_webhook'], environment: 'production' },
    });
  });

  it('writes the orders report: latest webhook by nine-digit event time, deliveries with retries, open discrepancies', async () => {
    const rows = JSON.parse(await report((out) => streamOrdersReport(db, { environment: 'sandbox' }, 'json', out))) as Record<string, unknown>[];
    expect(rows.map((r) => Object.keys(r))).toEqual([[...ORDER_COLUMNS], [...ORDER_COLUMNS]]);
    const byUuid = Object.fromEntries(rows.map((r) => [r.uuid, r]));
    expect(byUuid[plain]).toEqual({
      uuid: plain, external_reference_id: 'plain-ref', api_state: 'shipped', webhook_state: 'confirmed',
      last_event_time: eventTime(-10, 123_456_789), deliveries: 3, open_discrepancies: 0,
    });
    expect(byUuid[awkward]).toMatchObject({ api_state: 'confirmed', webhook_state: null, deliveries: 0, open_discrepancies: 1 });
    const csv = parseCsv(await report((out) => streamOrdersReport(db, { environment: 'production' }, 'csv', out)));
    expect(csv).toHaveLength(2);
    expect(csv[1]![2]).toBe('');
  });

  it('writes the payouts report header with no payouts yet', async () => {
    const text = await report((out) => streamPayoutsReport(db, { environment: 'sandbox' }, 'csv', out));
    expect(text).toBe(`${PAYOUT_COLUMNS.join(',')}\r\n`);
    expect(await report((out) => streamPayoutsReport(db, { environment: 'sandbox' }, 'json', out))).toBe('[]\n');
  });
});
