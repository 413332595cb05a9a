import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { afterAll, expect, it } from 'vitest';
import { applyMigrations, MIGRATIONS_FOLDER } from '../../src/ledger/migrate.js';
import { silentLogger } from '../../src/log/logger.js';
import { classifyDelivery, type StorableClassification } from '../../src/webhooks/classify.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
useTestDatabase('partition_migration', (d) => (db = d), { migrate: false });
let folder: string | undefined;
afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

const UNPARTITIONED = '0011_reparse';

/** The migrations as they were before partitioning: the folder with its journal cut after 0011. */
async function migrationsBeforePartitioning(): Promise<string> {
  folder = await mkdtemp(join(tmpdir(), 'bnpl-migrations-'));
  await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === UNPARTITIONED);
  expect(last).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, last + 1);
  await writeFile(journalPath, JSON.stringify(journal));
  return folder;
}

it('partitioning keeps every existing delivery, its id, its applied decision, and the id sequence', { timeout: 60_000 }, async () => {
  await migrate(db.db, { migrationsFolder: await migrationsBeforePartitioning() });
  // Two months of deliveries as the unpartitioned ledger held them: an applied event, its retry in
  // the next month, and an unparsed one.
  const key = 'k'.repeat(64);
  // The event's time: every delivery of one event key carries it (the key hashes it).
  const time = '2026-09-30T23:59:58.000000000Z';
  await db.sql`
    insert into webhook_deliveries (delivery_uuid, environment, received_at, headers, raw_body, signature_valid, topic, parse_status,
                                    event_key, entity_type, entity_id, event_time, event_time_sortable, applied, parser_version)
    values (${randomUUID()}, 'sandbox', '2026-09-30T23:59:59.999999Z', '{}'::jsonb, ${Buffer.from([0, 1, 2, 255])}, true, 'order/created', 'parsed',
            ${key}, 'order', 'o-1', ${time}, ${time}, true, 3),
           (${randomUUID()}, 'sandbox', '2026-10-01T00:00:00Z', '{}'::jsonb, ${Buffer.from('retry')}, true, 'order/created', 'parsed',
            ${key}, 'order', 'o-1', ${time}, ${time}, false, 3),
           (${randomUUID()}, 'production', '2026-10-02T00:00:00Z', '{"a":"b"}'::jsonb, ${Buffer.from('??')}, true, null, 'invalid_shape',
            null, null, null, null, null, false, 0)`;
  const columns = 'id, delivery_uuid, environment, received_at, headers, raw_body, topic, parse_status, event_key, entity_id, applied, parser_version';
  const before = await db.sql.unsafe(`select ${columns} from webhook_deliveries order by id`);

  await applyMigrations(db, silentLogger());

  expect(await db.sql.unsafe(`select ${columns} from webhook_deliveries order by id`)).toEqual(before);
  const where = await db.sql<{ id: string; part: string }[]>`select id::text, tableoid::regclass::text as part from webhook_deliveries order by id`;
  expect(where.map((w) => w.part)).toEqual(['webhook_deliveries_p2026_09', 'webhook_deliveries_p2026_10', 'webhook_deliveries_p2026_10']);
  const [kind] = await db.sql<{ kind: string }[]>`select relkind::text as kind from pg_class where relname = 'webhook_deliveries'`;
  expect(kind!.kind).toBe('p');
  const claims = await db.sql<{ delivery_id: string }[]>`select delivery_id::text from webhook_applied_events where event_key = ${key}`;
  expect(claims.map((c) => c.delivery_id)).toEqual([where[0]!.id]);

  // The receiver carries on: ids continue past the migrated ones, and another retry of the
  // migrated event is stored as a retry, not applied a second time.
  const body = Buffer.from('{"topic":"invoice/created","invoice_uuid":"7a2b3c4d-1111-4222-8333-444455556666","external_reference_id":"INV","event_time":"2026-10-01T00:00:00Z"}');
  const classification = classifyDelivery(body) as StorableClassification;
  expect(classification.status).toBe('parsed');
  const fresh = { deliveryUuid: randomUUID(), environment: 'sandbox' as const, receivedAt: new Date(), sourceIp: null, headers: {}, rawBody: body, keyFingerprint: null, classification };
  const [written] = await writeDeliveries(db.sql, [fresh]);
  expect(written!.deliveryId).toBeGreaterThan(Number(where[2]!.id));
  const retry = {
    ...fresh,
    deliveryUuid: randomUUID(),
    classification: { ...classification, event: { ...classification.event!, key, eventTime: { raw: time, sortable: time } } } as StorableClassification,
  };
  const [again] = await writeDeliveries(db.sql, [retry]);
  expect([again!.applied, again!.duplicate]).toEqual([false, true]);
});
