import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';

let database: TestDatabase;
let receiver: TestReceiver;

beforeAll(async () => {
  database = await createTestDatabase('webhook_durable_commit');
  // A server (or database) tuned for throughput: commits return before their WAL is flushed. Set
  // before any of the receiver's connections exist, as a DBA's postgresql.conf would.
  const admin = createSqlClient(database.url, { poolMax: 1 });
  try {
    await admin.unsafe(`alter database "${database.name}" set synchronous_commit = off`);
    await admin.unsafe(`create table recorded_commit_mode (setting text)`);
    await admin.unsafe(`create function record_commit_mode() returns trigger language plpgsql as $$
      begin insert into recorded_commit_mode values (current_setting('synchronous_commit')); return null; end $$`);
    await admin.unsafe(`create trigger recorded_commit_mode after insert on webhook_deliveries for each row execute function record_commit_mode()`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  receiver = await startTestReceiver(database);
});
afterAll(async () => {
  await receiver?.close();
});

describe('a 2xx means the delivery is durable', () => {
  it('commits each delivery with synchronous_commit on, whatever the server default', async () => {
    const result = await postDelivery(receiver.url, JSON.stringify(samplePayload('order/confirmed', 51)));
    expect(result.status).toBe(200);
    const modes = await database.sql<{ setting: string }[]>`select setting from recorded_commit_mode`;
    expect(modes.length).toBe(1);
    // 'off' would answer 2xx before the commit's WAL reached disk; a crash of Postgres within the
    // WAL writer's delay would lose a delivery the provider never sends again.
    expect(modes[0]?.setting).not.toBe('off');
  });
});
