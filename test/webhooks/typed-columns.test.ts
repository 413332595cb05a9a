import { getTableColumns, getTableName, is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import * as events from '../../src/schema/events.js';
import { ALL_TOPICS } from '../../src/provider/vocabulary.js';
import { classifyDelivery } from '../../src/webhooks/classify.js';
import { randomUUID } from 'node:crypto';
import { typedInsert, writeDeliveries, type DeliveryRecord } from '../../src/webhooks/ledger-write.js';
import type { StorableClassification } from '../../src/webhooks/classify.js';
import { EVENT_COLUMNS, TYPED_COLUMNS, TYPED_TABLES, type TypedTable } from '../../src/webhooks/typed-rows.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The typed-row writer against the schema it writes: the insert of every typed table names exactly
 * the table's columns and reads each from the batch's JSON as the column's type, and every row
 * builder fills exactly those columns. A column added, renamed or retyped in the schema (or in a
 * migration) without the writer following fails here.
 */

/** The table's columns, from drizzle's schema: SQL name and type. */
const schemaTables: PgTable[] = (Object.values(events) as unknown[]).filter((value): value is PgTable => is(value, PgTable));
const schemaColumns = (table: PgTable) => Object.values(getTableColumns(table)).map((c) => ({ name: c.name, sqlType: c.getSQLType() }));

/** What typedInsert's statement text names: the insert's column list and json_to_recordset's definitions. */
function writerColumns(table: TypedTable) {
  const text = typedInsert(table, 2);
  const insert = /insert into (\w+) \(([^)]*)\)/.exec(text);
  const record = /as u\(n int, ([^)]*)\)/.exec(text);
  return {
    table: insert?.[1],
    inserted: insert?.[2]?.split(',').map((c) => c.trim()),
    read: record?.[1]?.split(', ').map((d) => ({ name: d.slice(0, d.indexOf(' ')), sqlType: d.slice(d.indexOf(' ') + 1) })),
  };
}

let db: TestDatabase;
useTestDatabase('typed_columns', (d) => (db = d));

describe('typed-row writer columns', () => {

  it('cover every typed table of the schema, and insert exactly its columns, each read as its type', () => {
    expect(schemaTables.map(getTableName).sort()).toEqual([...TYPED_TABLES].sort());
    for (const table of schemaTables) {
      const name = getTableName(table) as TypedTable;
      const columns = schemaColumns(table);
      const writer = writerColumns(name);
      expect(writer.table).toBe(name);
      expect([...(writer.inserted ?? [])].sort(), name).toEqual(columns.map((c) => c.name).sort());
      const typed = columns.filter((c) => !(EVENT_COLUMNS as readonly string[]).includes(c.name));
      expect(writer.read, name).toEqual(typed);
      expect(TYPED_COLUMNS[name], name).toEqual(typed);
    }
  });

  it('match the columns the migrations created, by name and type', async () => {
    const rows = await db.sql<{ table_name: string; column_name: string; type: string }[]>`
      select c.table_name, c.column_name, format_type(a.atttypid, a.atttypmod) as type
      from information_schema.columns c
      join pg_attribute a on a.attrelid = (quote_ident(c.table_schema) || '.' || quote_ident(c.table_name))::regclass and a.attname = c.column_name
      where c.table_schema = 'public' and c.table_name = any(${TYPED_TABLES}) and c.is_generated = 'NEVER' and c.identity_generation is null
      order by c.table_name, c.ordinal_position`;
    for (const table of TYPED_TABLES) {
      const inDatabase = rows.filter((r) => r.table_name === table);
      const writer = writerColumns(table);
      expect([...(writer.inserted ?? [])].sort(), table).toEqual(inDatabase.map((r) => r.column_name).sort());
      const dbType = new Map(inDatabase.map((r) => [r.column_name, r.type]));
      for (const column of writer.read ?? []) expect([table, column.name, column.sqlType]).toEqual([table, column.name, dbType.get(column.name)]);
    }
  });

  it('are exactly what each row builder fills, for every topic', () => {
    const seen = new Set<TypedTable>();
    for (const topic of ALL_TOPICS) {
      const result = classifyDelivery(Buffer.from(JSON.stringify(samplePayload(topic))));
      const typed = result.ok ? result.event?.typed : undefined;
      expect(typed, topic).toBeDefined();
      if (!typed) continue;
      seen.add(typed.table);
      expect(Object.keys(typed.values).sort(), topic).toEqual(TYPED_COLUMNS[typed.table].map((c) => c.name).sort());
    }
    expect([...seen].sort()).toEqual([...TYPED_TABLES].sort());
  });

  it('land in their tables whichever typed tables a batch holds: all, one, none, or another set on the same connection', async () => {
    const record = (topic: string, n: number): DeliveryRecord => {
      const rawBody = Buffer.from(JSON.stringify(samplePayload(topic, n)));
      const classification = classifyDelivery(rawBody);
      if (!classification.ok) throw new Error(`${topic} does not classify`);
      return { deliveryUuid: randomUUID(), environment: 'sandbox', receivedAt: new Date(), sourceIp: null, headers: {}, rawBody, keyFingerprint: null, classification: classification as StorableClassification };
    };
    const unknown = (): DeliveryRecord => {
      const rawBody = Buffer.from(JSON.stringify({ topic: 'something/new', n: randomUUID() }));
      const classification = classifyDelivery(rawBody);
      if (!classification.ok) throw new Error('unknown topic not storable');
      return { deliveryUuid: randomUUID(), environment: 'sandbox', receivedAt: new Date(), sourceIp: null, headers: {}, rawBody, keyFingerprint: null, classification: classification as StorableClassification };
    };
    const tableOf = (r: DeliveryRecord) => r.classification.event?.typed.table;
    const everyTopic = ALL_TOPICS.map((topic) => record(topic, 101));
    const oneTable = [record('order/confirmed', 102), record('order/declined', 102)];
    const noTable = [unknown(), unknown()];
    // Of every topic but the orders' and in reverse order: another set, its parameters in another order than the batch's.
    const anotherSet = ALL_TOPICS.filter((topic) => !topic.startsWith('order/')).reverse().map((topic) => record(topic, 103));
    const pool = db.sql;
    const written = [];
    for (const batch of [everyTopic, oneTable, noTable, anotherSet, oneTable.map((r) => ({ ...r, deliveryUuid: randomUUID() }))]) {
      const results = await writeDeliveries(pool, batch);
      written.push(...batch.map((r, i) => ({ record: r, result: results[i]! })));
    }
    const applied = written.filter((w) => w.result.applied);
    // Each event is applied once, by its first delivery (payloads without an event time repeat their
    // event in the fourth batch; the last batch repeats the second's events).
    const events = new Set(written.map((w) => w.record.classification.event?.key).filter((key) => key !== undefined));
    expect(events.size).toBeGreaterThan(everyTopic.length);
    expect(applied.map((w) => w.record.classification.event?.key).sort()).toEqual([...events].sort());
    expect(written.slice(-2).map((w) => w.result.duplicate)).toEqual([true, true]);
    expect(written.filter((w) => w.record.classification.event === undefined).map((w) => w.result.applied)).toEqual([false, false]);
    for (const table of TYPED_TABLES) {
      const rows = await pool<{ event_key: string }[]>`select event_key from ${pool(table)}`;
      const expected = applied.filter((w) => tableOf(w.record) === table).map((w) => w.record.classification.event?.key).sort();
      expect(expected.length, table).toBeGreaterThan(0);
      expect([table, rows.map((r) => r.event_key).sort()]).toEqual([table, expected]);
    }
  });
});
