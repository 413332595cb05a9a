import { request } from 'undici';
import { loadConfig } from '../../src/config/load.js';
import { healthRoutes } from '../../src/http/health.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import type { TestDatabase } from '../helpers/database.js';

export const TOKEN = 'alice-2e9a6b8f9ae100b959a57a8973c90c31';

export interface Answer { status: number; type: string; headers: Record<string, unknown>; text: string; bytes: Buffer }

export async function call(url: string, options: { method?: 'GET' | 'POST'; token?: string | null; body?: string | Buffer; accept?: string; contentType?: string } = {}): Promise<Answer> {
  const token = options.token === undefined ? TOKEN : options.token;
  const response = await request(url, {
    method: options.method ?? 'GET',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(options.accept ? { accept: options.accept } : {}),
      'content-type': options.contentType ?? 'application/json',
    },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  const bytes = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, type: String(response.headers['content-type']), headers: response.headers, text: bytes.toString('utf8'), bytes };
}

/** An operator API on loopback over the test database, as the daemon builds it (operatorRoutes). */
export async function startOperatorServer(
  database: TestDatabase,
  env: Record<string, string> = {},
  log: Logger = silentLogger(),
  /** test hooks of operatorRoutes (a shorter ledger deadline) */
  hooks: { ledgerDeadlineMs?: number } = {},
): Promise<HttpServer> {
  const config = loadConfig({ OPERATOR_TOKENS: `alice:${TOKEN}`, PROVIDER_ENV: 'sandbox', ...env });
  return startHttpServer({
    host: '127.0.0.1', port: 0, log, name: 'operator',
    routes: [...healthRoutes(database, { isStopping: () => false, hasSigningSecret: () => true }), ...operatorRoutes({ config, database, log, ...hooks })],
  });
}

export async function insertFinding(database: TestDatabase, f: {
  env?: string; kind: string; status?: string; entityType?: string; entity: string; subject?: string; ref?: string | null; sepa?: string | null;
  expected?: string | null; observed?: string | null; details?: string; evidence?: unknown; hash?: string;
}): Promise<number> {
  const [row] = await database.sql<{ id: string }[]>`
    insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, external_reference_id, sepa_reference,
                               expected, observed, details, evidence, evidence_hash, first_detected_at)
    values (${f.env ?? 'sandbox'}, ${f.kind}, ${f.status ?? 'open'}, ${f.entityType ?? (f.kind.startsWith('payout') ? 'payout' : 'order')}, ${f.entity},
            ${f.subject ?? ''}, ${f.ref ?? null}, ${f.sepa ?? null}, ${f.expected ?? null}, ${f.observed ?? null}, ${f.details ?? 'A sentence.'},
            ${f.evidence === undefined ? null : JSON.stringify(f.evidence)}::jsonb, ${f.hash ?? null}, now())
    returning id::text`;
  return Number(row!.id);
}
