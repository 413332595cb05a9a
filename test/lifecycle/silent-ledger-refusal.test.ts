import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { giveUpSilentLedgerOnStop } from '../../src/daemon/silent-ledger-on-stop.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * daemon/silent-ledger-on-stop.ts: a stop ends every connection only when the server does not
 * answer. A server that refuses a new session with an error of its own (here `too many
 * connections for role`, 53300, as `too many clients` would) is alive: the connections stay, so
 * the receiver's commits in flight can still return. Before, any failed probe counted as silence.
 */
const ROLE = 'silent_ledger_refusal_role';
let test: TestDatabase;
let refused: Database;
let admin: postgres.Sql;

beforeAll(async () => {
  test = await createTestDatabase('silent_ledger_refusal');
  admin = postgres(test.url, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`drop role if exists ${ROLE}`);
  await admin.unsafe(`create role ${ROLE} login connection limit 0`);
  const url = new URL(test.url);
  url.username = ROLE;
  refused = databaseOver(createSqlClient(url.toString(), { poolMax: 1 }), { closeTimeoutSeconds: 0 });
});
afterAll(async () => {
  await refused?.close(0).catch(() => undefined);
  await admin?.unsafe(`drop role if exists ${ROLE}`);
  await admin?.end({ timeout: 2 });
});

describe('a stop whose ledger refuses the probe with an error of its own', () => {
  it('keeps the connections: the server answered', { timeout: 20_000 }, async () => {
    // The role's own sessions are refused: the probe the watch takes gets 53300.
    await expect(refused.sessions.take({ fresh: true }).session`select 1`).rejects.toMatchObject({ name: 'PostgresError', code: '53300' });
    let ended = 0;
    const stop = giveUpSilentLedgerOnStop({ stopping: () => Promise.resolve() }, { sessions: refused.sessions, endNow: () => void (ended += 1) }, silentLogger());
    try {
      // The first probe a second into the stop, another 2 s after it.
      await new Promise((resolve) => setTimeout(resolve, 4_500));
      expect(ended).toBe(0);
    } finally {
      stop();
    }
  });
});
