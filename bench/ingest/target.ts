/**
 * The server side of the ingest benchmark, run in its own process: either the daemon's receiver
 * (MODE=daemon), the baseline a user would write by hand (MODE=baseline: node:http, the same
 * HMAC check, one INSERT per request), or the floor (MODE=floor: node:http answering 200 as soon as
 * the body is in, nothing checked or stored), which shows what HTTP and the load generator alone
 * cost on this machine, or MODE=unbatched: the daemon's checks and the daemon's ledger statement,
 * but one statement (one commit) per request, with no group commit. It shows what grouping buys
 * for the same work; the baseline above does less (one row, no typed row, no dedup).
 * Prints `READY <url>` once listening. In daemon mode, the IPC message 'reparse' starts the daemon's
 * reparse job beside the receiver (bench/reparse/index.ts), and 'inbox' one scan of the statement
 * inbox under RECON_DATA_DIR (bench/statements/beside-ingest.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Counter } from 'prom-client';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { drizzle } from 'drizzle-orm/postgres-js';
import type { AppContext } from '../../src/daemon/context.js';
import { loadConfig } from '../../src/config/load.js';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { startHttpServer } from '../../src/http/server.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import * as schema from '../../src/schema/tables.js';
import { silentLogger } from '../../src/log/logger.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { createWebhookReceiver, type WebhookReceiver } from '../../src/webhooks/create-receiver.js';
import { startReparseJob } from '../../src/reparse/job.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { classifyDelivery } from '../../src/webhooks/classify.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { verifySignature } from '../../src/webhooks/signature.js';
import { createMetrics } from '../../src/daemon/metrics.js';

const url = process.env.DATABASE_URL as string;
const secret = process.env.WEBHOOK_SECRET as string;
const mode = process.env.MODE;
const log = silentLogger();
// The hand-written baseline keeps a commit in flight per pooled connection, 16 as issue 26 measured
// it; the daemon's pool is its default's size.
const sql = createSqlClient(url, { poolMax: mode === 'baseline' ? 16 : 10 });

if (mode === 'daemon') {
  // RECON_DATA_DIR given: the statement inbox may be started there (bench/statements/beside-ingest.ts),
  // with room for its 500 MiB file.
  const inboxSettings = process.env.RECON_DATA_DIR ? { RECON_DATA_DIR: process.env.RECON_DATA_DIR, STATEMENT_MAX_FILE_BYTES: String(2 ** 30) } : {};
  const config = loadConfig({ DATABASE_URL: url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'silent', DB_POOL_MAX: '10', ...inboxSettings });
  const database = databaseOver(sql);
  const registry = createRegistry();
  const ctx: AppContext = { config, log, database, registry, metrics: createMetrics(registry, database, config.PROVIDER_ENV), shutdown: new Shutdown(log, 5000) };
  const receiver = await createWebhookReceiver(ctx);
  const http = await startHttpServer({ host: '127.0.0.1', port: 0, routes: [receiver.route], log, name: 'bench' });
  // 'hold' makes the receiver look slow to the reparse job (it then yields, one batch per 2 s at
  // most): the bench's control windows, under the same load from the rest of the machine.
  let held = false;
  const seenByReparse = { commitPressureMs: () => (held ? Number.POSITIVE_INFINITY : receiver.commitPressureMs()) };
  process.on('message', (message) => {
    if (message === 'reparse') void reparseBesideReceiver(ctx, seenByReparse).then((result) => process.send?.(result));
    held = message === 'hold' ? true : message === 'free' ? false : held;
    if (message === 'inbox') {
      // The daemon's statement inbox beside the receiver, yielding to it as in the daemon: one scan (the one at start), then stop.
      const inbox = startStatementInbox(ctx, { intervalMs: 3_600_000, settleMs: 0, receiver });
      void inbox.runNow().then(
        async (result) => {
          await inbox.stop();
          process.send?.({ inbox: result });
        },
        (error: unknown) => process.send?.({ inbox: { error: String(error) } }),
      );
    }
  });
  process.stdout.write(`READY ${http.url}/webhooks\n`);
} else if (mode === 'unbatched') {
  drizzle(sql, { schema }); // as in the daemon: it sets postgres.js's JSON and timestamp serializers, which writeDeliveries relies on
  listen(
    withBody((req, res, rawBody) => {
      const signature = req.headers['x-service-signature'];
      const check = verifySignature(rawBody, typeof signature === 'string' ? signature : undefined, [secret]);
      if (!check.valid) return void res.writeHead(401).end();
      const classification = classifyDelivery(rawBody);
      if (!classification.ok) return void res.writeHead(400).end();
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
      const record = { deliveryUuid: randomUUID(), environment: 'sandbox' as const, receivedAt: new Date(), sourceIp: req.socket.remoteAddress ?? null, headers, rawBody, keyFingerprint: check.keyFingerprint ?? null, classification };
      writeDeliveries(sql, [record]).then(
        ([result]) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'stored', delivery_id: result?.deliveryId })),
        () => res.writeHead(503).end(),
      );
    }),
  );
} else if (mode === 'floor') {
  listen(
    createServer((req, res) => {
      req.on('data', () => {});
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"stored"}'));
    }),
  );
} else {
  listen(
    withBody((req, res, body) => {
      const signature = req.headers['x-service-signature'];
      if (!verifySignature(body, typeof signature === 'string' ? signature : undefined, [secret]).valid) return void res.writeHead(401).end();
      let topic: string;
      try {
        topic = (JSON.parse(body.toString()) as { topic: string }).topic;
      } catch {
        return void res.writeHead(400).end();
      }
      sql`insert into webhook_deliveries (delivery_uuid, environment, headers, raw_body, signature_valid, topic, parse_status)
          values (gen_random_uuid(), 'sandbox', '{}', ${body}, true, ${topic}, 'parsed')`.then(
        () => res.writeHead(200).end('{"status":"stored"}'),
        () => res.writeHead(503).end(),
      );
    }),
  );
}

/**
 * For bench/reparse/index.ts: the daemon's automatic reparse job, started in this process beside the
 * receiver and yielding to it as in the daemon (daemon/daemon.ts), until nothing older is left to reparse.
 * Its speed, the process's RSS at its start and peak, and the run's record.
 */
async function reparseBesideReceiver(ctx: AppContext, receiver: Pick<WebhookReceiver, 'commitPressureMs'>) {
  const startRss = process.memoryUsage().rss;
  let peakRss = startRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const job = startReparseJob(ctx, { receiver });
  await job.runNow(); // queued behind the run the job starts at once: it resolves when that is done
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  await job.stop();
  const [run] = await ctx.database.sql<{ examined: number; outcomes: Record<string, number> }[]>`
    select examined, outcomes from reparse_runs order by id desc limit 1`;
  const yielded = (await (ctx.registry.getSingleMetric('bnpl_recon_reparse_yield_seconds_total') as Counter).get()).values[0]?.value ?? 0;
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
  return {
    examined: run?.examined, outcomes: run?.outcomes, seconds: Math.round(seconds * 100) / 100, deliveriesPerSecond: Math.round((run?.examined ?? 0) / seconds),
    yieldedSeconds: Math.round(yielded * 100) / 100, daemonRssAtStartMib: mib(startRss), daemonPeakRssMib: mib(peakRss),
  };
}

/** A node:http server that hands each request its whole body. */
function withBody(handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
}

function listen(server: Server): void {
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks\n`));
}
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
