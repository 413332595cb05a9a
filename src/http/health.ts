import { answerWithin } from '../db/answer-within.js';
import type { Database } from '../db/database.js';
import { readOnlyReason } from '../db/writable.js';
import { ledgerSchemaStatus } from '../ledger/migrate.js';
import type { Logger } from '../log/logger.js';
import { rateLimitedLog } from '../log/rate-limited.js';
import { sendJson, type Route } from './server.js';

export interface ReadinessChecks {
  isStopping: () => boolean;
  /** Without a signing secret every delivery gets 503: not ready, so traffic goes to a replica that has one. */
  hasSigningSecret: () => boolean;
  /** Why deliveries cannot be acknowledged in time now (commits stalled), or undefined. */
  commitStall?: () => string | undefined;
  /** Which singleton jobs this replica leads now (holds their advisory lock), shown in every /readyz body. */
  leadership?: () => Promise<Record<string, boolean>>;
  /** Where the database's own error goes: /readyz is on the public port and says only "database unreachable". */
  log?: Logger;
}

/** How long the readiness check waits for the ledger. */
export const CHECK_TIMEOUT_MS = 2000;

/**
 * Liveness says the process answers; readiness says it can do its job (ledger reachable and
 * writable, schema current, a signing secret). A ledger that refuses writes (a standby, a
 * read-only primary) is not ready: no delivery could be acknowledged there.
 */
export function healthRoutes(database: Database, checks: ReadinessChecks): Route[] {
  // A probe every few seconds against a database that is down: one line a minute is enough.
  const unreachable = checks.log ? rateLimitedLog(checks.log, 'error', 'readiness: database unreachable') : () => undefined;
  return [
    { method: 'GET', path: '/healthz', handler: (_req, res) => sendJson(res, 200, { status: 'ok' }) },
    {
      method: 'GET',
      path: '/readyz',
      handler: async (_req, res) => {
        // Leadership goes in every answer, ready or not: an operator asking "which replica polls?" asks here.
        const leader = checks.leadership ? { leader: await checks.leadership() } : {};
        const send = (status: number, body: Record<string, unknown>) => sendJson(res, status, { ...body, ...leader });
        if (checks.isStopping()) return send(503, { status: 'stopping' });
        const stall = checks.commitStall?.();
        if (stall) return send(503, { status: stall });
        if (!checks.hasSigningSecret()) return send(503, { status: 'no webhook signing secret (GET /webhooks/keys failed and WEBHOOK_SECRET is unset)' });
        try {
          const [schema, readOnly] = await answerWithin(Promise.all([ledgerSchemaStatus(database), readOnlyReason(database.sql)]), CHECK_TIMEOUT_MS, () => {
            // No answer: the pool's connections may be half-open after a failover, waiting
            // ~15 min for TCP to give up. New ones reach whatever the address leads to now.
            database.recycle(`the readiness check got no answer within ${CHECK_TIMEOUT_MS} ms`);
            throw new Error('database check timed out');
          });
          if (readOnly) {
            database.reportReadOnly(readOnly);
            return send(503, { status: 'database refuses writes', error: readOnly });
          }
          if (schema.state === 'behind') return send(503, { status: 'migrations pending', schema: schema.reason });
          if (schema.state === 'incompatible') return send(503, { status: 'schema unknown to this release', schema: schema.reason });
          send(200, { status: 'ready', ...(schema.state === 'newer_compatible' ? { schema: schema.reason } : {}) });
        } catch (error) {
          // The error text can name roles, hosts and databases: logged, never answered.
          unreachable({ err: (error as Error).message });
          send(503, { status: 'database unreachable' });
        }
      },
    },
  ];
}
