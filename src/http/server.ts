import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isTransientDatabaseError } from '../db/errors.js';
import type { Logger } from '../log/logger.js';
import { ConfigError } from '../config/load.js';

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void;

export interface Route {
  method: string;
  /** Exact path, or a RegExp whose groups the handler reads from the URL itself. */
  path: string | RegExp;
  handler: Handler;
}

export interface HttpServer {
  server: Server;
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish, then closes idle keep-alive sockets. */
  close(): Promise<void>;
}

/** A JSON answer; `close` asks the client to drop the connection (refusals whose body we did not read). */
function sendJson(res: ServerResponse, status: number, body: unknown, close = false): void {
  if (res.headersSent) {
    // Too late for a status: the answer began (a streamed report). Ending it would make the part
    // sent look whole; destroying the socket leaves a chunked body without its last chunk, which
    // every HTTP client reports as an error.
    res.destroy();
    return;
  }
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(payload);
}

export { sendJson };

export interface ServerTimeouts {
  /** A request's headers must have arrived this long after its first byte. */
  headersMs: number;
  /** The whole request (headers and body) must have arrived this long after its first byte. */
  requestMs: number;
}

export const DEFAULT_SERVER_TIMEOUTS: ServerTimeouts = { headersMs: 5_000, requestMs: 10_000 };

export function serverTimeouts(config: { SERVER_HEADERS_TIMEOUT_MS: number; SERVER_REQUEST_TIMEOUT_MS: number }): ServerTimeouts {
  return { headersMs: config.SERVER_HEADERS_TIMEOUT_MS, requestMs: config.SERVER_REQUEST_TIMEOUT_MS };
}

/**
 * How often node:http looks for requests past headersTimeout or requestTimeout. Node checks only
 * every connectionsCheckingInterval (30 s by default), so a slow client was cut off 17-40 s in
 * instead of at the configured 5 and 10 s; checking at a quarter of the shorter timeout (at most
 * every 500 ms) enforces each within that much. The check walks the open connections: cheap.
 */
function checkingIntervalMs(timeouts: ServerTimeouts): number {
  return Math.max(25, Math.min(500, Math.floor(timeouts.headersMs / 4)));
}

/**
 * The request target as a URL, or why it is refused. Only a path is taken ("origin-form"): an
 * absolute URL, or a path beginning `//` (which URL parsing reads as a host), was routed by the
 * path it carried, so `//evil.example/api/session` reached /api/session while a proxy rule on
 * `/api/` saw another path. Dot segments, plain or percent-encoded, are refused for the same
 * reason: `/healthz/../api/orders` would be /api/orders here and something else to a proxy; so is
 * a backslash, which URL parsing reads as a slash.
 */
export function requestUrl(target: string | undefined): URL | string {
  const raw = target ?? '/';
  if (!raw.startsWith('/') || raw.startsWith('//')) return 'request target must be a path beginning with a single /';
  const path = raw.split(/[?#]/, 1)[0]!;
  // URL parsing reads a backslash as a slash: refused with the dot segments it could spell.
  if (/\\|%5c/i.test(path)) return 'request target must not contain a backslash';
  if (path.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) return 'request target must not contain . or .. segments';
  return new URL(`http://localhost${raw}`);
}

/**
 * A small router over node:http. Timeouts bound what a slow client can hold (SERVER_HEADERS_TIMEOUT_MS,
 * SERVER_REQUEST_TIMEOUT_MS: 5 s and 10 s by default; the provider itself gives up after 5 s).
 */
export async function startHttpServer(options: {
  host: string;
  port: number;
  routes: Route[];
  log: Logger;
  name: string;
  timeouts?: ServerTimeouts;
  /** The setting the port comes from (PORT, METRICS_PORT), named when the port cannot be had. */
  portSetting?: string;
}): Promise<HttpServer> {
  const { log, routes } = options;
  const timeouts = options.timeouts ?? DEFAULT_SERVER_TIMEOUTS;
  const serverOptions = {
    requestTimeout: timeouts.requestMs,
    headersTimeout: timeouts.headersMs,
    keepAliveTimeout: 5_000,
    connectionsCheckingInterval: checkingIntervalMs(timeouts),
  };
  // Each connection's request being answered, for close(): a request whose body has all come in is
  // let finish (a webhook waiting for its commit answers 2xx or 503); one still coming in, or a
  // connection between or before requests, is cut: nothing of it was taken yet.
  const answering = new Map<Socket, IncomingMessage>();
  const connections = new Set<Socket>();
  const server = createServer(serverOptions, (req, res) => {
    answering.set(req.socket, req);
    res.once('close', () => {
      if (answering.get(req.socket) === req) answering.delete(req.socket);
    });
    // Answers here carry financial data: never cached by a browser or a proxy on the way, never
    // sniffed into another type. A route may say otherwise (the page's static files).
    res.setHeader('cache-control', 'no-store');
    res.setHeader('x-content-type-options', 'nosniff');
    const url = requestUrl(req.url);
    if (typeof url === 'string') {
      req.resume();
      return sendJson(res, 400, { error: url }, true);
    }
    const matches = (r: Route) => (typeof r.path === 'string' ? r.path === url.pathname : r.path.test(url.pathname));
    // HEAD is GET without the body (RFC 9110 9.3.2: every general-purpose server supports both):
    // uptime monitors probe with it. node:http sends no body for a HEAD request, whatever is written.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const route = routes.find((r) => matches(r) && r.method === method);
    if (!route) {
      const allowed = [...new Set(routes.filter(matches).flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method])))];
      req.resume();
      if (allowed.length === 0) return sendJson(res, 404, { error: 'not found' });
      res.setHeader('allow', allowed.join(', '));
      return sendJson(res, 405, { error: 'method not allowed' });
    }
    Promise.resolve()
      .then(() => route.handler(req, res, url))
      .catch((error: unknown) => {
        if (isTransientDatabaseError(error)) {
          log.error({ err: (error as Error).message, path: url.pathname }, 'request failed: database unavailable');
          return sendJson(res, 503, { error: 'database unavailable; retry' });
        }
        log.error({ err: error, path: url.pathname }, 'request failed');
        sendJson(res, 500, { error: 'internal error' });
      });
  });
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  server.on('clientError', (error, socket) => {
    // A client past SERVER_HEADERS_TIMEOUT_MS or SERVER_REQUEST_TIMEOUT_MS is told 408, as node:http
    // itself would; every other parse failure is a 400.
    const timedOut = (error as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT';
    log.debug({ err: error.message }, timedOut ? 'client too slow: cut off' : 'client error');
    if (socket.writable) socket.end(timedOut ? 'HTTP/1.1 408 Request Timeout\r\nconnection: close\r\n\r\n' : 'HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const setting = options.portSetting ?? 'the port setting';
      if (error.code === 'EADDRINUSE') {
        reject(new Error(`${options.name}: port ${options.port} on ${options.host} is already in use (EADDRINUSE): set ${setting} to a free port, or stop what listens there`));
      } else if (error.code === 'EACCES' || error.code === 'EADDRNOTAVAIL') {
        // Settings this machine cannot honour are bad configuration: exit 2 (cli.ts), as the contract says.
        reject(new ConfigError(`${options.name}: cannot listen on ${options.host}:${options.port} (${error.code}): check ${setting} and HOST`, error.code === 'EACCES' ? setting : 'HOST'));
      } else if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') {
        reject(new ConfigError(`${options.name}: HOST '${options.host}' does not resolve to an address (${error.code}): set HOST to an address of this machine`, 'HOST'));
      } else reject(error);
    });
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  log.info({ port, host: options.host }, `${options.name} listening`);
  let closing: Promise<void> | undefined;
  return {
    server,
    port,
    url: `http://${host}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // A client still sending its request (a slow sender, a stalled proxy) held the stop until
        // SERVER_REQUEST_TIMEOUT_MS cut it off, as long as the default SHUTDOWN_TIMEOUT_MS: the
        // shutdown then ended at its deadline with exit 1 (test/lifecycle/sigterm-slow-request.test.ts).
        for (const socket of connections) if (!answering.get(socket)?.complete) socket.destroy();
      });
      return closing;
    },
  };
}
