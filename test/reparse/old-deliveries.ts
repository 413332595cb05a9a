import { randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database.js';
import { classifyDelivery, type StorableClassification } from '../../src/webhooks/classify.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { TYPED_TABLES } from '../../src/webhooks/typed-rows.js';

/**
 * Deliveries as an older release stored them: its own verdict (status, topic, parse error) and
 * parser_version 0, the raw bytes as received. What parsed then is written by the receiver's own
 * writer (so its typed row and applied decision are real) and then marked version 0.
 */
export interface OldDelivery {
  body: string;
  /** The old parser's verdict; absent: it parsed the body as this release does. */
  old?: { status: 'invalid_shape' | 'unknown_topic'; topic: string | null; error: string };
}

export async function storeAsOldParser(database: Database, deliveries: OldDelivery[]): Promise<void> {
  for (const d of deliveries) {
    if (d.old) {
      await database.sql`
        insert into webhook_deliveries (delivery_uuid, environment, headers, raw_body, signature_valid, topic, parse_status, parse_error, parser_version)
        values (${randomUUID()}, 'sandbox', ${'{"content-type":"application/json"}'}::jsonb, ${Buffer.from(d.body)}, true, ${d.old.topic},
                ${d.old.status}, ${d.old.error}, 0)`;
      continue;
    }
    const classification = classifyDelivery(Buffer.from(d.body));
    if (!classification.ok || classification.status !== 'parsed') throw new Error(`fixture body does not parse: ${d.body}`);
    const [written] = await writeDeliveries(database.sql, [
      {
        deliveryUuid: randomUUID(), environment: 'sandbox', receivedAt: new Date(), sourceIp: null, headers: { 'content-type': 'application/json' },
        rawBody: Buffer.from(d.body), keyFingerprint: null, classification: classification as StorableClassification,
      },
    ]);
    await database.sql`update webhook_deliveries set parser_version = 0 where id = ${written!.deliveryId}`;
  }
}

/** Every delivery's derived fields, in arrival order (ids differ between databases, so they are left out). */
export function derivedFields(database: Database) {
  return database.sql<{ topic: string | null; parse_status: string; parse_error: string | null; event_key: string | null; entity_id: string | null; applied: boolean }[]>`
    select topic, parse_status::text as parse_status, parse_error, event_key, entity_type, entity_id, event_time, event_time_sortable, applied
    from webhook_deliveries order by id`;
}

/**
 * Every typed table's rows as jsonb text (exact: bigints stay digits), without received_at (the
 * instant of storage, not a value derived from the bytes), in a stable order.
 */
export async function typedSnapshot(database: Database): Promise<Record<string, string[]>> {
  const snapshot: Record<string, string[]> = {};
  for (const table of TYPED_TABLES) {
    const rows = await database.sql.unsafe<{ row: string }[]>(`select (to_jsonb(t) - 'received_at')::text as row from ${table} t order by environment, event_key`);
    snapshot[table] = rows.map((r) => r.row);
  }
  return snapshot;
}

export async function typedCount(database: Database): Promise<number> {
  const snapshot = await typedSnapshot(database);
  return Object.values(snapshot).reduce((n, rows) => n + rows.length, 0);
}
