import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log/logger.js';

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
    res.end();
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

/**
 * A small router over node:http. Timeouts bound what a slow client can hold: headers within 5 s,
 * the whole request within 10 s (the provider itself gives up after 5 s).
 */
export async function startHttpServer(options: { host: string; port: number; routes: Route[]; log: Logger; name: string }): Promise<HttpServer> {
  const { log, routes } = options;
  const server = createServer({ requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 5_000 }, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = routes.find((r) => (typeof r.path === 'string' ? r.path === url.pathname : r.path.test(url.pathname)) && r.method === req.method);
    if (!route) {
      const pathKnown = routes.some((r) => (typeof r.path === 'string' ? r.path === url.pathname : r.path.test(url.pathname)));
      req.resume();
      return sendJson(res, pathKnown ? 405 : 404, { error: pathKnown ? 'method not allowed' : 'not found' });
    }
    Promise.resolve()
      .then(() => route.handler(req, res, url))
      .catch((error: unknown) => {
        log.error({ err: error, path: url.pathname }, 'request failed');
        sendJson(res, 500, { error: 'internal error' });
      });
  });
  server.on('clientError', (error, socket) => {
    log.debug({ err: error.message }, 'client error');
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
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
      });
      return closing;
    },
  };
}
