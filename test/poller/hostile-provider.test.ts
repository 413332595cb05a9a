import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testMetrics } from '../helpers/metrics.js';
import { createProviderClient } from '../../src/provider/client.js';
import { runPoll } from '../../src/poller/run.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { capturingLogger, testConfig } from '../provider/helpers.js';

/**
 * The poller against a hostile provider on loopback: malformed JSON, the wrong shape, a body that
 * never ends, pages that never end, a server that never answers, one that trickles. Each poll run
 * ends `failed` with its reason recorded in poll_runs, within seconds, and reads a bounded amount.
 */
type Mode = 'malformed' | 'wrong-shape' | 'endless-body' | 'endless-paging' | 'silent' | 'trickle';

let db: TestDatabase;
useTestDatabase('hostile_provider', (database) => (db = database));
let server: Server;
let url = '';
let mode: Mode = 'malformed';
let bytesSent = 0;
const sockets = new Set<Socket>();

function endless(res: ServerResponse, chunk: Buffer): void {
  // JSON whitespace after an opening: a parser could not refuse it before the end, which never comes.
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"orders": [');
  const pump = () => {
    while (!res.destroyed) {
      bytesSent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
}

beforeAll(async () => {
  const spaces = Buffer.alloc(1 << 20, 0x20);
  server = createServer((req, res) => {
    const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
    switch (mode) {
      case 'malformed': return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"orders": [{"uuid": ');
      case 'wrong-shape': return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"orders": "none", "meta": [1,2]}');
      case 'endless-body': return endless(res, spaces);
      case 'endless-paging': {
        // Every page full of new orders: the list never ends.
        const orders = Array.from({ length: 20 }, (_, i) => ({ uuid: `00000000-0000-4000-8000-${(page * 100 + i).toString(16).padStart(12, '0')}`, state: 'confirmed', external_reference_id: `P${page}-${i}` }));
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ orders }));
      }
      case 'silent': return; // never answers
      case 'trickle': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(' ')), 100);
        return;
      }
    }
  });
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server?.close(resolve));
});

const REASONS: Record<Mode, RegExp> = {
  malformed: /not JSON/,
  'wrong-shape': /unexpected shape/,
  'endless-body': /larger than 64 MiB/,
  'endless-paging': /POLL_MAX_PAGES/,
  silent: /timeout|no complete answer in time/i,
  trickle: /no complete answer in time/,
};

describe('a poll against a hostile provider', () => {
  for (const m of Object.keys(REASONS) as Mode[]) {
    it(`ends failed and recorded on ${m}`, { timeout: 30_000 }, async () => {
      mode = m;
      bytesSent = 0;
      const config = testConfig({
        PROVIDER_BASE_URL: url, PROVIDER_ENV: 'sandbox', HTTP_BODY_TIMEOUT_MS: 1500, HTTP_CONNECT_TIMEOUT_MS: 500, HTTP_MAX_RETRIES: 1,
        POLL_MAX_PAGES: 40, POLL_PAGE_SIZE: 20, RATE_LIMIT_RPS: 500,
      });
      const { log } = capturingLogger('warn');
      const { metrics } = testMetrics(db);
      const client = createProviderClient(config, log, metrics.provider, { backoff: { baseMs: 5, capMs: 50, maxRetryAfterMs: 100 } });
      const started = performance.now();
      try {
        const summary = await runPoll({ config, log, database: db, metrics }, client);
        const ms = performance.now() - started;
        console.info(`hostile provider ${m}: ${summary.status} after ${Math.round(ms)} ms, ${summary.pages} pages, ${Math.round(bytesSent / 1048576)} MiB sent: ${summary.error}`);
        expect(summary.status).toBe('failed');
        expect(summary.error).toMatch(REASONS[m]);
        const [run] = await db.sql<{ status: string; error: string | null; finished: boolean }[]>`select status::text, error, finished_at is not null as finished from poll_runs where id = ${summary.runId}`;
        expect(run).toMatchObject({ status: 'failed', finished: true });
        expect(run?.error).toMatch(REASONS[m]);
        expect(ms).toBeLessThan(15_000);
        // An endless body is read up to the client's bound (64 MiB, not retried), not without end.
        expect(bytesSent).toBeLessThan(80 * 1048576);
      } finally {
        await client.close();
      }
    });
  }
});
