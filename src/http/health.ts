import type { Database } from '../db/database.js';
import { migrationsAreCurrent } from '../ledger/migrate.js';
import { sendJson, type Route } from './server.js';

/** Liveness says the process answers; readiness says it can do its job (ledger reachable, schema current). */
export function healthRoutes(database: Database, isStopping: () => boolean): Route[] {
  return [
    { method: 'GET', path: '/healthz', handler: (_req, res) => sendJson(res, 200, { status: 'ok' }) },
    {
      method: 'GET',
      path: '/readyz',
      handler: async (_req, res) => {
        if (isStopping()) return sendJson(res, 503, { status: 'stopping' });
        try {
          const current = await Promise.race([
            migrationsAreCurrent(database),
            new Promise<never>((_, reject) => setTimeout(() => reject(new Error('database check timed out')), 2000).unref()),
          ]);
          if (!current) return sendJson(res, 503, { status: 'migrations pending' });
          sendJson(res, 200, { status: 'ready' });
        } catch (error) {
          sendJson(res, 503, { status: 'database unreachable', error: (error as Error).message });
        }
      },
    },
  ];
}
