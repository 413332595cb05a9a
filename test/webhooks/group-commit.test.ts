import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { classifyDelivery, type StorableClassification } from '../../src/webhooks/classify.js';
import { GroupCommitWriter } from '../../src/webhooks/group-commit.js';
import type { DeliveryRecord } from '../../src/webhooks/ledger-write.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The group commit's last line, for a row that fails its statement although the schemas let it
 * through (the schemas should make this unreachable; here a typed value is corrupted by hand): the
 * bad delivery is isolated by halving, not by rewriting every neighbour singly, and is stored with
 * its raw bytes as invalid_shape (ledger_refused) instead of being lost.
 */
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('group_commit');
});

function record(n: number, corrupt = false): DeliveryRecord {
  const rawBody = Buffer.from(JSON.stringify(samplePayload('order/confirmed', 10_000 + n)));
  const classification = classifyDelivery(rawBody) as StorableClassification;
  if (classification.status !== 'parsed') throw new Error('sample did not parse');
  if (corrupt) classification.event.typed.values.net_term_days = 2 ** 31; // beyond int4: the statement fails
  return { deliveryUuid: randomUUID(), environment: 'sandbox', receivedAt: new Date(), sourceIp: '127.0.0.1', headers: {}, rawBody, keyFingerprint: null, classification };
}

describe('group commit with a delivery its statement refuses', () => {
  it('isolates it by halving and stores it unparsed; its neighbours are applied', async () => {
    const batches: number[] = [];
    const writer = new GroupCommitWriter(database.sql, { maxBatch: 1024, maxConcurrentBatches: 1, log: silentLogger(), onBatch: (size) => batches.push(size) });
    // The first write goes alone at once; the 128 behind it gather into one batch.
    const first = writer.write(record(0));
    const records = Array.from({ length: 128 }, (_, i) => record(i + 1, i === 77));
    const results = await Promise.all([first, ...records.map((r) => writer.write(r))]);
    await writer.idle();

    expect(batches.slice(0, 2)).toEqual([1, 128]);
    // Halving finds one bad row among 128 in 2 * log2(128) = 14 statements, plus one for the unparsed write.
    expect(batches.length - 2).toBeLessThanOrEqual(15);
    const bad = results[78];
    expect(bad?.classification).toMatchObject({ status: 'invalid_shape', reason: 'ledger_refused' });
    expect(results.filter((r) => r.classification.status === 'parsed' && r.applied)).toHaveLength(128);

    const [row] = await database.sql`select parse_status, parse_error, raw_body, applied, event_key from webhook_deliveries where id = ${bad?.deliveryId as number}`;
    expect(row).toMatchObject({ parse_status: 'invalid_shape', applied: false, event_key: null });
    expect(row?.parse_error).toMatch(/^the ledger refused the parsed fields: .*out of range/);
    expect(Buffer.from(row?.raw_body as Buffer).equals(records[77]?.rawBody as Buffer)).toBe(true);
    const [counts] = await database.sql`select count(*)::int as deliveries, (select count(*)::int from order_events) as typed from webhook_deliveries`;
    expect(counts).toEqual({ deliveries: 129, typed: 128 });
  });
});
