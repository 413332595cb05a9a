import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UsageError } from '../app/errors.js';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';
import { acknowledgeDiscrepancy } from '../reconcile/index.js';
import { parseDiscrepancyQuery, streamDiscrepancies, streamPayoutsReport, type ReportFormat } from '../reports/index.js';
import { readBody, BodyTooLargeError } from '../webhooks/read-body.js';
import { sendJson, type Route } from './server.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Bearer OPERATOR_TOKEN, compared in constant time (hashes of equal length). With no token set the
 * operator endpoints are refused outright: reports hold business data.
 */
function authorised(req: IncomingMessage, res: ServerResponse, token: string | undefined): boolean {
  if (token === undefined) {
    sendJson(res, 403, { error: 'operator API disabled: set OPERATOR_TOKEN' });
    return false;
  }
  const header = req.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice(7) : '';
  if (!timingSafeEqual(digest(given), digest(token))) {
    res.setHeader('www-authenticate', 'Bearer');
    sendJson(res, 401, { error: 'missing or wrong bearer token' });
    return false;
  }
  return true;
}

function startReport(res: ServerResponse, format: ReportFormat, name: string): void {
  res.writeHead(200, {
    'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    ...(format === 'csv' ? { 'content-disposition': `attachment; filename="${name}.csv"` } : {}),
  });
}

export function operatorRoutes(deps: { config: Config; database: Database; log: Logger }): Route[] {
  const { config, database, log } = deps;
  return [
    {
      method: 'GET',
      path: '/api/discrepancies',
      handler: async (req, res, url) => {
        if (!authorised(req, res, config.OPERATOR_TOKEN)) return;
        let query;
        try {
          query = parseDiscrepancyQuery({
            format: url.searchParams.get('format') ?? undefined,
            status: url.searchParams.get('status') ?? undefined,
            kind: url.searchParams.getAll('kind'),
            since: url.searchParams.get('since') ?? undefined,
            env: url.searchParams.get('env') ?? undefined,
          });
        } catch (error) {
          if (error instanceof UsageError) return sendJson(res, 400, { error: error.message.replace(/--/g, '') });
          throw error;
        }
        startReport(res, query.format, 'discrepancies');
        await streamDiscrepancies(database, query.filters, query.format, res);
        res.end();
      },
    },
    {
      method: 'GET',
      path: '/api/payouts',
      handler: async (req, res, url) => {
        if (!authorised(req, res, config.OPERATOR_TOKEN)) return;
        const format = url.searchParams.get('format') ?? 'json';
        if (format !== 'csv' && format !== 'json') return sendJson(res, 400, { error: `format must be csv or json, not '${format}'` });
        const env = url.searchParams.get('env') ?? config.PROVIDER_ENV;
        if (env !== 'sandbox' && env !== 'production') return sendJson(res, 400, { error: `env must be sandbox or production` });
        startReport(res, format, 'payouts');
        await streamPayoutsReport(database, { environment: env }, format, res);
        res.end();
      },
    },
    {
      method: 'POST',
      path: /^\/api\/discrepancies\/[^/]+\/ack$/,
      handler: async (req, res, url) => {
        if (!authorised(req, res, config.OPERATOR_TOKEN)) return;
        const id = Number(url.pathname.split('/')[3]);
        let note: unknown;
        let actor: unknown;
        try {
          const parsed = JSON.parse((await readBody(req, 64 * 1024)).toString('utf8')) as { note?: unknown; actor?: unknown };
          note = parsed.note;
          actor = parsed.actor;
        } catch (error) {
          return sendJson(res, error instanceof BodyTooLargeError ? 413 : 400, { error: 'body must be JSON: {"note": "..."}' });
        }
        if (typeof note !== 'string' || note.trim() === '') return sendJson(res, 400, { error: 'note is required' });
        const result = await acknowledgeDiscrepancy(database, id, note, typeof actor === 'string' && actor.trim() ? actor.trim() : 'api');
        if (result.outcome === 'not_found') return sendJson(res, 404, { error: `no discrepancy ${url.pathname.split('/')[3]}` });
        if (result.outcome === 'resolved') return sendJson(res, 409, { error: `discrepancy ${id} is already resolved` });
        log.info({ id, actor: result.discrepancy.acknowledgedBy }, 'discrepancy acknowledged');
        sendJson(res, 200, result.discrepancy);
      },
    },
  ];
}
