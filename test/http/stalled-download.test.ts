import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { pino } from 'pino';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * A streamed report (GET /api/* without limit) reads the ledger through a postgres.js cursor that
 * keeps its pool connection until the last row is written. A client that stops reading (a laptop put
 * to sleep mid-download, a script that never reads the body, a zero TCP window) must not hold it:
 * the pool is the daemon's one (DB_POOL_MAX), which the webhook receiver shares, and DB_POOL_MAX such
 * downloads left every other /api/* request and every delivery waiting for a connection for ever.
 * The download is cut off once its socket took no byte for REPORT_STALL_MS (here 1 s).
 */
const TOKEN = 'alice-2e9a6b8f9ae100b959a57a8973c90c31';
const ROWS = 100_000;
const POOL = 2;
let database: TestDatabase;
let server: HttpServer;
const stalled: Socket[] = [];
const logLines: { level: number; msg: string; path?: string }[] = [];
const STALL_MS = 1000;

beforeAll(async () => {
  database = await createTestDatabase('stalled_download', { poolMax: POOL });
  await database.sql`
    insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, expected, observed, details, evidence_hash)
    select 'sandbox', 'duplicate_delivery', 'open', 'webhook_delivery', g::text, '', '1', g::text, 'Delivery ' || g || ' ' || repeat('x', 300), md5(g::text)
    from generate_series(1, ${ROWS}) g`;
  const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(JSON.parse(s) as (typeof logLines)[number]) });
  server = await startHttpServer({
    host: '127.0.0.1', port: 0, log, name: 'operator',
    routes: operatorRoutes({ config: loadConfig({ OPERATOR_TOKENS: `alice:${TOKEN}`, PROVIDER_ENV: 'sandbox' }), database, log, reportStallMs: STALL_MS }),
  });
}, 60_000);
afterAll(async () => {
  for (const s of stalled) s.destroy();
  await server?.close();
});

/** Asks for the whole report, reads the status line, then stops reading (socket paused). */
function stalledDownload(): Promise<string> {
  // (closed by the server once it gives up on it; afterAll destroys what is left)
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.write(`GET /api/discrepancies?status=all&format=csv HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\n\r\n`);
    });
    socket.setNoDelay(true);
    stalled.push(socket);
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve(chunk.toString('latin1').split('\r\n')[0]!);
    });
    socket.on('error', reject);
  });
}

describe('a report download whose client stops reading', () => {
  it('is cut off, with a warning, so the ledger pool is free again: other requests are answered 200', { timeout: 60_000 }, async () => {
    // Control: with nothing stalled the overview answers at once.
    const before = await request(`${server.url}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` } });
    await before.body.text();
    expect(before.statusCode).toBe(200);
    for (let i = 0; i < POOL; i++) expect(await stalledDownload()).toBe('HTTP/1.1 200 OK');
    // Let the server fill the socket buffers and wait for a drain that never comes.
    await new Promise((r) => setTimeout(r, 3 * STALL_MS));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 15_000);
    let outcome: string;
    try {
      const response = await request(`${server.url}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` }, signal: controller.signal });
      outcome = `answered ${response.statusCode}`;
      await response.body.text();
    } catch {
      outcome = 'no answer within 15 s';
    } finally {
      clearTimeout(timer);
    }
    expect(outcome).toBe('answered 200');
    expect(logLines.filter((l) => l.level === 40 && l.msg.includes('report download cut off')).map((l) => l.path)).toEqual(['/api/discrepancies', '/api/discrepancies']);
  });
});
