import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createProviderClient, type ProviderClient } from '../../src/provider/client.js';
import type { TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { capturingLogger, testConfig } from '../provider/helpers.js';

export function uuidOf(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

/** A bare loopback HTTP server whose handler a test writes itself. */
export class Loopback {
  server: Server | undefined;
  readonly sockets = new Set<Socket>();
  readonly timers = new Set<NodeJS.Timeout>();
  constructor(private readonly handler: Handler) {}
  async listen(): Promise<string> {
    const server = createServer((req, res) => this.handler(req, res, new URL(req.url ?? '/', 'http://x')));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }
  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

export function makeContext(database: TestDatabase, url: string, settings: Record<string, string | number> = {}, backoff = { baseMs: 5, capMs: 100, maxRetryAfterMs: 5000 }) {
  const config = testConfig({ PROVIDER_BASE_URL: url, PROVIDER_ENV: 'sandbox', HTTP_BODY_TIMEOUT_MS: 2000, HTTP_CONNECT_TIMEOUT_MS: 1000, ...settings });
  const { log, lines } = capturingLogger();
  const { metrics } = testMetrics(database);
  const client: ProviderClient = createProviderClient(config, log, metrics.provider, { backoff });
  return { client, lines, ctx: { config, log, database, metrics } };
}
