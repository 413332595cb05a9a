import type { AppContext } from '../../src/daemon/context.js';
import { loadConfig } from '../../src/config/load.js';
import type { Database } from '../../src/db/database.js';
import { serverTimeouts, startHttpServer, type HttpServer } from '../../src/http/server.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { createLogger, silentLogger } from '../../src/log/logger.js';
import { computeSignature } from '../../src/webhooks/signature.js';
import { createWebhookReceiver, type ReceiverDeps, type WebhookReceiver } from '../../src/webhooks/create-receiver.js';
import { request } from 'undici';
import { testMetrics } from './metrics.js';

export const TEST_SECRET = 'whsec_receiver_test_secret';

export interface TestReceiver {
  url: string;
  ctx: AppContext;
  receiver: WebhookReceiver;
  http: HttpServer;
  close(): Promise<void>;
}

/** A real receiver on a loopback port, over the given test database. */
export async function startTestReceiver(database: Database, env: Record<string, string> = {}, deps: ReceiverDeps = {}): Promise<TestReceiver> {
  const config = loadConfig({ WEBHOOK_SECRET: TEST_SECRET, PORT: '0', ...env });
  const log = process.env.TEST_LOG ? createLogger(process.env.TEST_LOG, 'stderr') : silentLogger();
  const ctx: AppContext = { config, log, database, ...testMetrics(database), shutdown: new Shutdown(log, 5000) };
  const receiver = await createWebhookReceiver(ctx, deps);
  const http = await startHttpServer({ host: '127.0.0.1', port: 0, routes: [receiver.route], log, name: 'test receiver', timeouts: serverTimeouts(config) });
  return {
    url: `${http.url}/webhooks`,
    ctx,
    receiver,
    http,
    close: async () => {
      await http.close();
      await receiver.drain();
    },
  };
}

export interface PostResult {
  status: number;
  body: Record<string, unknown>;
}

/** Posts raw bytes, signed with `secret` unless a signature is given. */
export async function postDelivery(
  url: string,
  rawBody: Buffer | string,
  options: { secret?: string; signature?: string | null; headers?: Record<string, string> } = {},
): Promise<PostResult> {
  const bytes = typeof rawBody === 'string' ? Buffer.from(rawBody) : rawBody;
  const signature = options.signature === undefined ? computeSignature(bytes, options.secret ?? TEST_SECRET) : options.signature;
  const response = await request(url, {
    method: 'POST',
    body: bytes,
    headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'x-service-signature': signature }), ...options.headers },
  });
  const text = await response.body.text();
  return { status: response.statusCode, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
