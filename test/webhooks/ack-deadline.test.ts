import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { healthRoutes } from '../../src/http/health.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, type PostResult, type TestReceiver } from '../helpers/receiver.js';

/**
 * The provider gives up on a delivery after 5 s. Whatever the ledger does (a table lock, a server
 * that accepts connections and never answers, a closed port), each delivery is answered within
 * WEBHOOK_ACK_DEADLINE_MS plus scheduling margin: 2xx after its commit, or 503.
 */
const DEADLINE_MS = 800;
// Event-loop and 2-core scheduling slack on top of the deadline; still far below the provider's 5 s.
const MARGIN_MS = 700;

async function timedPost(url: string, body: string): Promise<PostResult & { ms: number }> {
  const started = performance.now();
  const result = await postDelivery(url, body);
  return { ...result, ms: performance.now() - started };
}

async function readiness(url: string): Promise<{ status: number; body: string }> {
  const response = await request(`${url}/readyz`);
  return { status: response.statusCode, body: await response.body.text() };
}

describe('ack deadline under a table lock', () => {
  let database: TestDatabase;
  let receiver: TestReceiver;
  let health: HttpServer;

  beforeAll(async () => {
    database = await createTestDatabase('ack_deadline');
    receiver = await startTestReceiver(database, { WEBHOOK_ACK_DEADLINE_MS: String(DEADLINE_MS) });
    health = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      log: silentLogger(),
      name: 'health',
      routes: healthRoutes(database, { isStopping: () => false, hasSigningSecret: () => true, commitStall: () => receiver.receiver.commitStall() }),
    });
  });
  afterAll(async () => {
    await health?.close();
    await receiver?.close();
  });

  it('answers 503 within the deadline while the ledger is locked, is unready, and applies each event once after the lock is gone', async () => {
    const body = (n: number) => JSON.stringify(samplePayload('order/confirmed', n));
    for (let n = 0; n < 5; n += 1) expect((await postDelivery(receiver.url, body(n))).status).toBe(200);
    expect((await readiness(health.url)).status).toBe(200);

    const locker = createSqlClient(database.url, { poolMax: 1 });
    const held = await locker.reserve();
    await held`begin`;
    await held`lock table webhook_deliveries in access exclusive mode`;
    const lockedAt = performance.now();
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await held`commit`;
      held.release();
      await locker.end({ timeout: 2 });
    };
    try {
      // New events, and a retry of an event stored before the lock.
      const underLock = [...Array.from({ length: 10 }, (_, i) => body(100 + i)), body(0)];
      const first = await timedPost(receiver.url, underLock[0] as string);
      const rest = await Promise.all(underLock.slice(1).map((b) => timedPost(receiver.url, b)));
      const answers = [first, ...rest];
      expect(answers.map((a) => a.status)).toEqual(Array(answers.length).fill(503));
      const longest = Math.max(...answers.map((a) => a.ms));
      expect(longest).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      console.info(`ack under a table lock: longest ${longest.toFixed(0)} ms with WEBHOOK_ACK_DEADLINE_MS=${DEADLINE_MS}`);

      // The first batch is still waiting for the lock: this replica cannot acknowledge.
      const unready = await readiness(health.url);
      expect(unready.status).toBe(503);
      expect(unready.body).toContain('ledger commits stalled');

      // The lock outlives the deadline several times over.
      const lockFor = 3 * DEADLINE_MS - (performance.now() - lockedAt);
      if (lockFor > 0) await new Promise((r) => setTimeout(r, lockFor));
      const late = await timedPost(receiver.url, body(200));
      expect(late.status).toBe(503);
      expect(late.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      await release();

      let ready = 0;
      for (let i = 0; i < 50 && ready !== 200; i += 1) {
        ready = (await readiness(health.url)).status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(ready).toBe(200);

      // The provider retries every 503: each lands, the batch that was already sent when the
      // deadline passed committed after the lock and its retry is a duplicate.
      const retries = await Promise.all([...underLock, body(200)].map((b) => postDelivery(receiver.url, b)));
      expect(retries.map((r) => r.status)).toEqual(Array(retries.length).fill(200));
      expect(retries[0]?.body.duplicate).toBe(true);
    } finally {
      await release();
    }

    const perEvent = await database.sql<{ key: string; applied: number }[]>`
      select event_key as key, count(*) filter (where applied)::int as applied from webhook_deliveries group by event_key`;
    expect(perEvent).toHaveLength(16);
    for (const row of perEvent) expect(row.applied, row.key).toBe(1);
    const [typed] = await database.sql<{ n: number }[]>`select count(*)::int as n from order_events`;
    expect(typed?.n).toBe(16);
  });
});

describe('ack deadline with the ledger unreachable', () => {
  const sockets: Socket[] = [];
  let silent: TcpServer;
  let closedPort: number;

  beforeAll(async () => {
    // A server that accepts connections and never says a word: a frozen (SIGSTOPped) Postgres.
    silent = createTcpServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const probe = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  const ledgerAt = (port: number): Database => {
    const sql = createSqlClient(`postgres://postgres@127.0.0.1:${port}/ledger`, { poolMax: 2 });
    return databaseOver(sql, { closeTimeoutSeconds: 1 });
  };

  it('answers 503 at once when nothing listens on the ledger port', async () => {
    const database = ledgerAt(closedPort);
    const receiver = await startTestReceiver(database, { WEBHOOK_ACK_DEADLINE_MS: String(DEADLINE_MS) });
    try {
      const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => timedPost(receiver.url, JSON.stringify(samplePayload('order/created', i)))));
      expect(answers.map((a) => a.status)).toEqual(Array(5).fill(503));
      // Refused connections fail fast: well before the deadline.
      expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(DEADLINE_MS);
    } finally {
      await receiver.close();
      await database.close();
    }
  });

  it('answers 503 at the deadline when the ledger accepts connections and never answers', async () => {
    const database = ledgerAt((silent.address() as AddressInfo).port);
    const receiver = await startTestReceiver(database, { WEBHOOK_ACK_DEADLINE_MS: String(DEADLINE_MS) });
    try {
      const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => timedPost(receiver.url, JSON.stringify(samplePayload('order/created', i)))));
      expect(answers.map((a) => a.status)).toEqual(Array(5).fill(503));
      const longest = Math.max(...answers.map((a) => a.ms));
      expect(longest).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
      expect(longest).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      // The batch sent to the silent server is still waiting: readiness would say so.
      await new Promise((r) => setTimeout(r, 200));
      expect(receiver.receiver.commitStall()).toMatch(/ledger commits stalled/);
    } finally {
      await Promise.race([receiver.close(), new Promise((r) => setTimeout(r, 3000))]);
      await database.close();
    }
  });
});
