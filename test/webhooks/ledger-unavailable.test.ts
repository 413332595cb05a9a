import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { isRefusalOfValues, isTransientDatabaseError } from '../../src/db/errors.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';

// A batch statement that fails for a reason other than its deliveries' values is the ledger being
// unavailable: the receiver answers 503 and stores nothing, so the provider's retry brings the
// delivery again. Storing it as refused by the ledger (invalid_shape, never applied) and answering
// 2xx lost its event: the provider does not retry a 2xx, and nothing reparses a row of the current
// parser version.
describe('the receiver when the ledger fails for a reason that is not a delivery', () => {
  let test: TestDatabase;
  let database: Database;
  let receiver: TestReceiver;
  beforeAll(async () => {
    test = await createTestDatabase('ledger_unavailable');
    await test.sql.unsafe(`alter database "${test.name}" set lock_timeout = '300ms'`);
    // Connections opened after the setting have it.
    database = databaseOver(createSqlClient(test.url, { poolMax: 4 }));
    receiver = await startTestReceiver(database);
  });
  afterAll(async () => {
    await receiver?.close();
    await database?.close();
  });

  it('answers 503 to a delivery whose typed table another session holds past lock_timeout, then applies the retry', async () => {
    const locker = createSqlClient(test.url, { poolMax: 1 });
    const body = JSON.stringify(samplePayload('order/confirmed', 4242));
    let answer;
    try {
      await locker.begin(async (tx) => {
        // As a migration or a CREATE INDEX of another replica would.
        await tx`lock table order_events in share mode`;
        answer = await postDelivery(receiver.url, body);
      });
    } finally {
      await locker.end();
    }
    expect(answer).toMatchObject({ status: 503 });
    expect(await test.sql`select id from webhook_deliveries`).toHaveLength(0);
    const retry = await postDelivery(receiver.url, body);
    expect(retry).toMatchObject({ status: 200, body: { status: 'stored', duplicate: false, parse_status: 'parsed' } });
    const [applied] = await test.sql<{ deliveries: number; events: number }[]>`
      select (select count(*) from webhook_deliveries where applied and parse_status = 'parsed')::int as deliveries,
             (select count(*) from order_events)::int as events`;
    expect(applied).toEqual({ deliveries: 1, events: 1 });
  });

  it('answers 503 when the database is reached through a Unix socket that is gone', async () => {
    const gone = databaseOver(postgres({ path: '/nonexistent-bnpl-recon-socket-dir/.s.PGSQL.5432', user: 'postgres', database: 'ledger', connect_timeout: 2, max: 4, onnotice: () => {} }), {
      closeTimeoutSeconds: 1,
    });
    const unreachable = await startTestReceiver(gone);
    try {
      const answers = await Promise.all([1, 2, 3].map((i) => postDelivery(unreachable.url, JSON.stringify(samplePayload('order/confirmed', 500 + i)))));
      expect(answers.map((a) => a.status)).toEqual([503, 503, 503]);
    } finally {
      await unreachable.close();
      await gone.close();
    }
  });

  it('tells the errors of a server that cannot take the statement now from a refusal of its values', () => {
    const failure = (code: string) => Object.assign(new Error(code), { code });
    for (const code of ['55P03', '57014', '57P01', '53200', '58030', '08006', '3D000', 'ENOENT', 'EHOSTUNREACH', 'ECONNREFUSED',
      // The ledger refusing the daemon itself: its login, a privilege, its TLS certificate.
      '28000', '28P01', '42501', 'SASL_SIGNATURE_MISMATCH', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT']) {
      expect(isTransientDatabaseError(failure(code)), code).toBe(true);
    }
    // A value the ledger refuses (too long for an index, out of range, a constraint): the delivery's own.
    for (const code of ['22001', '22003', '23505', '23514', '54000', '42804', 'XX000']) {
      expect(isTransientDatabaseError(failure(code)), code).toBe(false);
    }
    expect(isTransientDatabaseError(new Error('no code'))).toBe(false);
  });

  it('halves a batch only for a refusal of its values (classes 22, 23 and 54000): any other failure would refuse every delivery', () => {
    const failure = (code: string) => Object.assign(new Error(code), { code });
    for (const code of ['22001', '22003', '22P02', '23505', '23514', '54000']) expect(isRefusalOfValues(failure(code)), code).toBe(true);
    for (const code of ['42501', '42P01', '42804', 'XX000', '28000', '57014', 'EPIPE', 'ECONNRESET']) expect(isRefusalOfValues(failure(code)), code).toBe(false);
    expect(isRefusalOfValues(new Error('no code'))).toBe(false);
  });
});

// A ledger the daemon cannot log in to (its role dropped, its password rotated: SQLSTATE class 28)
// or may not write to (42501) was not the ledger being unavailable: every delivery was halved,
// retried unparsed, and answered 500 (login) or 200 stored invalid_shape/ledger_refused, its event
// never applied and never retried by the provider (privilege).
describe('the receiver when the ledger refuses the daemon itself', () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase('ledger_refuses_daemon');
  });

  it('answers 503, not 500, when its role cannot log in', async () => {
    const url = new URL(test.url);
    url.username = 'bnpl_recon_no_such_role';
    const refused = databaseOver(createSqlClient(url.toString(), { poolMax: 2 }), { closeTimeoutSeconds: 1 });
    const receiver = await startTestReceiver(refused);
    try {
      const answer = await postDelivery(receiver.url, JSON.stringify(samplePayload('order/confirmed', 77)));
      expect(answer).toMatchObject({ status: 503 });
    } finally {
      await receiver.close();
      await refused.close();
    }
  });

  it('answers 503 and stores nothing when its role may not write a typed table, instead of 200 with the event never applied', async () => {
    const role = `bnpl_recon_writer_${Math.random().toString(16).slice(2, 10)}`;
    await test.sql.unsafe(`create role ${role} login`);
    await test.sql.unsafe(`grant usage on schema public to ${role}`);
    await test.sql.unsafe(`grant select, insert, update on all tables in schema public to ${role}`);
    await test.sql.unsafe(`grant usage, select on all sequences in schema public to ${role}`);
    // As a grant script that missed one table would leave it (or a table a migration added).
    await test.sql.unsafe(`revoke insert on order_events from ${role}`);
    const url = new URL(test.url);
    url.username = role;
    const limited = databaseOver(createSqlClient(url.toString(), { poolMax: 2 }), { closeTimeoutSeconds: 1 });
    const receiver = await startTestReceiver(limited);
    try {
      const answer = await postDelivery(receiver.url, JSON.stringify(samplePayload('order/confirmed', 78)));
      const stored = await test.sql`select id from webhook_deliveries`;
      expect({ status: answer.status, stored: stored.length }).toEqual({ status: 503, stored: 0 });
    } finally {
      await receiver.close();
      await limited.close();
      await test.sql.unsafe(`drop owned by ${role}`);
      await test.sql.unsafe(`drop role ${role}`);
    }
  });
});
