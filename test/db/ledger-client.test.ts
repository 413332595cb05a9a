import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchCommitStalls } from '../../src/daemon/commit-stall-watch.js';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import { healthRoutes } from '../../src/http/health.js';
import { applyMigrations } from '../../src/ledger/migrate.js';
import { silentLogger } from '../../src/log/logger.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';
import { sleep } from '../helpers/wait.js';
import { startProxy, type Proxy } from '../helpers/tcp-proxy.js';

/**
 * The ledger client (db/writable-host.ts) after a failover, with one address in DATABASE_URL that
 * leads to the primary whichever it is (a CloudNativePG -rw Service, HAProxy, a managed writer
 * endpoint, a virtual IP): it must find the new primary without a restart
 * (docs/high-availability.md).
 */
let shared!: TestDatabase;
useTestDatabase('db_ledger_client', (database) => (shared = database));

describe('readiness after a failover that leaves the pool half-open (old primary gone silently, the address now reaches a writable server)', () => {
  it('/readyz answers 200 again within 20 s without a restart', { timeout: 60_000 }, async () => {
    const proxy = await startProxy(new URL(shared.url));
    const database = databaseOver(createSqlClient(proxy.url, { poolMax: 4 }));
    const [ready] = healthRoutes(database, { isStopping: () => false, hasSigningSecret: () => true }).filter((r) => r.path === '/readyz');
    const server: Server = createServer((req, res) => void ready!.handler(req as never, res as never, {} as never));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const probe = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
      return res ? { status: res.status, body: await res.text() } : { status: 0, body: 'no answer' };
    };
    try {
      // The pool warm, as a daemon's is under webhook traffic.
      await Promise.all([1, 2, 3, 4].map(() => database.sql`select pg_sleep(0.05)`));
      expect((await probe()).status).toBe(200);
      // The failover: every open connection goes silent; the same address now answers on new connections.
      proxy.blackhole();
      const answers: string[] = [];
      let recovered = false;
      const until = Date.now() + 20_000;
      while (Date.now() < until && !recovered) {
        const answer = await probe();
        answers.push(`${answer.status} ${answer.body}`);
        recovered = answer.status === 200;
        if (!recovered) await sleep(500);
      }
      expect(recovered, `readiness never recovered within 20 s; last answers: ${answers.slice(-2).join(' | ')}`).toBe(true);
    } finally {
      await proxy.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await database.close(1);
    }
  });
});

describe('the receiver after a failover that leaves its pool half-open (old primary gone silently, the address now reaches a writable server)', () => {
  it('acknowledges deliveries again within 20 s without a restart', { timeout: 90_000 }, async () => {
    const proxy = await startProxy(new URL(shared.url));
    const database = databaseOver(createSqlClient(proxy.url, { poolMax: 4 }), { closeTimeoutSeconds: 1 });
    const receiver = await startTestReceiver(database);
    // As the daemon does (daemon.ts).
    const stopWatching = watchCommitStalls(() => receiver.receiver.commitStall(), database);
    try {
      // Traffic before the failover: the pool is warm.
      const before = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => postDelivery(receiver.url, JSON.stringify(samplePayload('order/confirmed', 7000 + i)))));
      expect(before.map((r) => r.status)).toEqual(Array(6).fill(200));
      proxy.blackhole();
      const statuses: number[] = [];
      let acknowledged = false;
      const until = Date.now() + 20_000;
      for (let i = 0; Date.now() < until && !acknowledged; i += 1) {
        const result = await postDelivery(receiver.url, JSON.stringify(samplePayload('order/confirmed', 8000 + i)));
        statuses.push(result.status);
        acknowledged = result.status === 200;
        if (!acknowledged) await sleep(500);
      }
      expect(acknowledged, `no delivery acknowledged within 20 s of the failover; answers: ${statuses.join(',')}`).toBe(true);
    } finally {
      stopWatching();
      await proxy.close();
      await receiver.close();
      await database.close(1);
    }
  });
});

/**
 * DATABASE_URL is one address that always points at the primary (docs/high-availability.md: a
 * CloudNativePG -rw Service, HAProxy, a managed writer endpoint). At the failover the old primary
 * stays up but refuses writes (default_transaction_read_only on), and the address sends new
 * connections to the new, writable primary. Two private servers, so the test may make one read-only.
 */
describe('a single-address DATABASE_URL whose old primary stays up read-only after the failover', () => {
  const dirs: string[] = [];
  let oldPrimary: EmbeddedServer | undefined;
  let newPrimary: EmbeddedServer | undefined;
  let proxy: Proxy;
  let database: Database;
  let receiver: TestReceiver;
  let health: Server;
  let healthPort = 0;

  beforeAll(async () => {
    for (let i = 0; i < 2; i += 1) {
      const dir = await mkdtemp(path.join(tmpdir(), 'ledger-client-ro-'));
      await chmod(dir, 0o755);
      dirs.push(dir);
    }
    [oldPrimary, newPrimary] = await Promise.all(dirs.map((dir) => startEmbeddedPostgres(dir, silentLogger())));
    for (const server of [oldPrimary!, newPrimary!]) {
      const migrating = databaseOver(createSqlClient(server.url, { poolMax: 2 }));
      await applyMigrations(migrating, silentLogger());
      await migrating.close(1);
    }
    // A failover's two servers take the same credentials; each embedded cluster has a password of
    // its own, so the new primary is given the old one's (a base64url string: no quoting needed).
    const promoted = createSqlClient(newPrimary!.url, { poolMax: 1 });
    await promoted.unsafe(`alter role postgres password '${decodeURIComponent(new URL(oldPrimary!.url).password)}'`);
    await promoted.end({ timeout: 1 });
    proxy = await startProxy(new URL(oldPrimary!.url));
    database = databaseOver(createSqlClient(proxy.url, { poolMax: 4 }), { closeTimeoutSeconds: 1 });
    receiver = await startTestReceiver(database);
    const [ready] = healthRoutes(database, { isStopping: () => false, hasSigningSecret: () => true }).filter((r) => r.path === '/readyz');
    health = createServer((req, res) => void ready!.handler(req as never, res as never, {} as never));
    await new Promise<void>((resolve) => health.listen(0, '127.0.0.1', resolve));
    healthPort = (health.address() as { port: number }).port;
  }, 120_000);

  afterAll(async () => {
    await receiver?.close();
    await new Promise<void>((resolve) => (health ? health.close(() => resolve()) : resolve()));
    await database?.close(1);
    await proxy?.close();
    await Promise.all([oldPrimary?.stop(), newPrimary?.stop()]);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('reopens the pool connections to the server now read-only: deliveries and /readyz recover within 20 s without a restart', { timeout: 90_000 }, async () => {
    const before = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => postDelivery(receiver.url, JSON.stringify(samplePayload('order/confirmed', 9000 + i)))));
    expect(before.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(200);

    // The failover: the old primary refuses writes, the address now leads to the new primary.
    const admin = createSqlClient(oldPrimary!.url, { poolMax: 1 });
    await admin`alter system set default_transaction_read_only = on`;
    await admin`select pg_reload_conf()`;
    await admin.end({ timeout: 1 });
    proxy.retarget(newPrimary!.port);
    await sleep(500);
    // Precondition: a new connection to the address reaches a writable primary.
    const fresh = createSqlClient(proxy.url, { poolMax: 1 });
    const [row] = await fresh<{ ro: string; port: number }[]>`select current_setting('transaction_read_only') as ro, inet_server_port() as port`;
    await fresh.end({ timeout: 1 });
    expect(row).toEqual({ ro: 'off', port: newPrimary!.port });

    const answers: string[] = [];
    let recovered = false;
    const until = Date.now() + 20_000;
    for (let i = 0; Date.now() < until && !recovered; i += 1) {
      const delivery = await postDelivery(receiver.url, JSON.stringify(samplePayload('order/confirmed', 9100 + i)));
      const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
      answers.push(`${delivery.status}/${ready.status}`);
      recovered = delivery.status === 200 && ready.status === 200;
      if (!recovered) await sleep(1_000);
    }
    expect(recovered, `delivery/readyz answers after the failover: ${answers.join(' ')}`).toBe(true);
  });
});
