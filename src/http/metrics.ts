import type { Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';
import { startHttpServer, type HttpServer, type ServerTimeouts } from './server.js';

/** GET /metrics on its own port, so scraping never competes with the provider's deliveries. */
export async function startMetricsServer(registry: Registry, options: { host: string; port: number; log: Logger; timeouts?: ServerTimeouts }): Promise<HttpServer> {
  return startHttpServer({
    host: options.host,
    port: options.port,
    log: options.log,
    name: 'metrics',
    portSetting: 'METRICS_PORT',
    timeouts: options.timeouts,
    routes: [
      {
        method: 'GET',
        path: '/metrics',
        handler: async (_req, res) => {
          const body = await registry.metrics();
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(body);
        },
      },
    ],
  });
}
