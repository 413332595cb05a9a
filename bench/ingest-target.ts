/**
 * The server side of the ingest benchmark, run in its own process: either the daemon's receiver
 * (MODE=daemon), the baseline a user would write by hand (MODE=baseline: node:http, the same
 * HMAC check, one INSERT per request), or the floor (MODE=floor: node:http answering 200 as soon as
 * the body is in, nothing checked or stored), which shows what HTTP and the load generator alone
 * cost on this machine. Prints `READY <url>` once listening.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { drizzle } from 'drizzle-orm/postgres-js';
import type { AppContext } from '../src/app/context.js';
import { loadConfig } from '../src/config/load.js';
import { createSqlClient } from '../src/db/database.js';
import { startHttpServer } from '../src/http/server.js';
import { Shutdown } from '../src/lifecycle/shutdown.js';
import * as schema from '../src/ledger/schema/index.js';
import { silentLogger } from '../src/log/logger.js';
import { createRegistry } from '../src/metrics/registry.js';
import { createWebhookReceiver } from '../src/webhooks/index.js';
import { verifySignature } from '../src/webhooks/signature.js';

const url = process.env.DATABASE_URL as string;
const secret = process.env.WEBHOOK_SECRET as string;
const mode = process.env.MODE;
const log = silentLogger();
const sql = createSqlClient(url, { poolMax: 10 });

if (mode === 'daemon') {
  const config = loadConfig({ DATABASE_URL: url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'silent', DB_POOL_MAX: '10' });
  const ctx: AppContext = { config, log, database: { sql, db: drizzle(sql, { schema }), embedded: false, close: async () => sql.end() }, registry: createRegistry(), shutdown: new Shutdown(log, 5000) };
  const receiver = await createWebhookReceiver(ctx);
  const http = await startHttpServer({ host: '127.0.0.1', port: 0, routes: [receiver.route], log, name: 'bench' });
  process.stdout.write(`READY ${http.url}/webhooks\n`);
} else if (mode === 'floor') {
  const server = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"stored"}'));
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks\n`));
} else {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const signature = req.headers['x-service-signature'];
      if (!verifySignature(body, typeof signature === 'string' ? signature : undefined, [secret]).valid) {
        res.writeHead(401).end();
        return;
      }
      let topic: string;
      try {
        topic = (JSON.parse(body.toString()) as { topic: string }).topic;
      } catch {
        res.writeHead(400).end();
        return;
      }
      sql`insert into webhook_deliveries (delivery_uuid, environment, headers, raw_body, signature_valid, topic, parse_status)
          values (gen_random_uuid(), 'sandbox', '{}', ${body}, true, ${topic}, 'parsed')`.then(
        () => res.writeHead(200).end('{"status":"stored"}'),
        () => res.writeHead(503).end(),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks\n`));
}
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
