import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import { applyMigrations } from '../../src/ledger/migrate.js';
import { silentLogger } from '../../src/log/logger.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';

/**
 * The ledger's own server is stopped in the middle of a stream of deliveries: this test needs a
 * Postgres it may stop, so it starts its own from the embedded package rather than the shared one.
 */
describe('ledger outage', () => {
  let dir: string;
  let server: EmbeddedServer;
  let database: Database;
  let receiver: TestReceiver;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'bnpl-outage-'));
    await chmod(dir, 0o755);
    server = await startEmbeddedPostgres(dir, silentLogger());
    const sql = createSqlClient(server.url, { poolMax: 4 });
    database = databaseOver(sql, { embedded: true, closeTimeoutSeconds: 2 });
    await applyMigrations(database, silentLogger());
    receiver = await startTestReceiver(database);
  });

  afterAll(async () => {
    await receiver?.close();
    await database?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 while the database is down and stores the retried deliveries once it is back', async () => {
    const bodies = Array.from({ length: 30 }, (_, i) => JSON.stringify(samplePayload('order/confirmed', 1000 + i)));
    const acknowledged = new Set<string>();
    for (const body of bodies.slice(0, 10)) {
      const result = await postDelivery(receiver.url, body);
      expect(result.status).toBe(200);
      acknowledged.add(body);
    }

    await server.stop();
    const outageStarted = performance.now();
    const duringOutage = await Promise.all(bodies.slice(10, 20).map((body) => postDelivery(receiver.url, body)));
    expect(duringOutage.map((r) => r.status)).toEqual(Array(10).fill(503));
    // Within WEBHOOK_ACK_DEADLINE_MS (3000 by default) plus scheduling margin, inside the provider's 5 s.
    expect(performance.now() - outageStarted).toBeLessThan(4000);

    server = await startEmbeddedPostgres(dir, silentLogger(), { port: server.port });
    // The provider retries every refused delivery, and sends new ones.
    for (const body of bodies.slice(10)) {
      let status = 0;
      for (let attempt = 0; attempt < 20 && status !== 200; attempt += 1) {
        status = (await postDelivery(receiver.url, body)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      expect(status).toBe(200);
      acknowledged.add(body);
    }

    const stored = await database.sql<{ raw: Buffer }[]>`select raw_body as raw from webhook_deliveries`;
    const storedBodies = new Set(stored.map((row) => Buffer.from(row.raw).toString()));
    for (const body of acknowledged) expect(storedBodies.has(body)).toBe(true);
    const [events] = await database.sql`select count(*)::int as n from order_events`;
    expect(events?.n).toBe(30);
  });
});
