import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Env } from './options.js';
import type { SlidingWindowLimiter } from './rate-limit.js';
import { registrationSchema, type Registration } from './registrations.js';

export interface ApiBackend {
  envForKey(key: string): Env | undefined;
  /** newest first */
  listOrders(env: Env, offset: number, limit: number): { uuid: string; state: string; external_reference_id: string }[];
  register(env: Env, topic: string, address: string): { registration: Registration; created: boolean };
  secret(env: Env): string;
  /** False during a simulated API outage: the orders API answers 503. */
  ordersAvailable?(): boolean;
}

export interface ApiServerOptions {
  backend: ApiBackend;
  limiter: SlidingWindowLimiter;
  defaultPerPage: number;
  maxPerPage: number;
}

interface ApiError {
  name: string;
  details: string;
}

const MAX_BODY_BYTES = 64 * 1024;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** The spec's error body: status equals the HTTP status, one element per problem, names in dot notation. */
function fail(res: ServerResponse, status: number, errors: ApiError[], headers: Record<string, string> = {}): void {
  send(res, status, { status, errors }, headers);
}

function positiveInt(raw: string | null, name: string, fallback: number, errors: ApiError[]): number {
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) {
    errors.push({ name, details: 'must be an integer' });
    return fallback;
  }
  const value = Number(raw);
  if (value < 1) errors.push({ name, details: 'must be greater than 0' });
  return value;
}

async function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; error: ApiError }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return { ok: false, status: 413, error: { name: 'body', details: 'is too large' } };
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, status: 400, error: { name: 'body', details: 'is not valid JSON' } };
  }
}

/** The provider's API as the spec shows it; the environment comes from the Api-Token alone. */
export function createApiServer(options: ApiServerOptions): Server {
  const { backend, limiter } = options;
  return createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) fail(res, 500, [{ name: 'server', details: 'internal error' }]);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const token = req.headers['api-token'];
    const env = typeof token === 'string' ? backend.envForKey(token) : undefined;
    const wait = limiter.take(`${env ?? 'none'}|${req.socket.remoteAddress ?? ''}`);
    if (wait > 0) {
      req.resume();
      return fail(res, 429, [{ name: 'rate_limit', details: 'more than the allowed requests per second' }], {
        'retry-after': String(Math.ceil(wait / 1000)),
      });
    }
    if (!env) {
      req.resume();
      return fail(res, 401, [{ name: 'Api-Token', details: token === undefined ? 'is missing' : 'is not a valid API key' }]);
    }
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (path === '/api/v1/orders') {
      if (req.method !== 'GET') return methodNotAllowed(req, res, 'GET');
      if (backend.ordersAvailable?.() === false) return fail(res, 503, [{ name: 'service', details: 'the orders API is temporarily unavailable' }]);
      const errors: ApiError[] = [];
      const page = positiveInt(url.searchParams.get('page'), 'page', 1, errors);
      const perPage = Math.min(positiveInt(url.searchParams.get('per_page'), 'per_page', options.defaultPerPage, errors), options.maxPerPage);
      if (errors.length > 0) return fail(res, 422, errors);
      return send(res, 200, { orders: backend.listOrders(env, (page - 1) * perPage, perPage) });
    }
    if (path === '/webhooks' || path === '/api/v1/webhooks') {
      if (req.method !== 'POST') return methodNotAllowed(req, res, 'POST');
      const body = await readJson(req);
      if (!body.ok) return fail(res, body.status, [body.error]);
      const input = typeof body.value === 'object' && body.value !== null && !Array.isArray(body.value) ? body.value : {};
      const parsed = registrationSchema.safeParse(input);
      if (!parsed.success) {
        const errors: ApiError[] = [];
        for (const issue of parsed.error.issues) {
          const name = issue.path.map(String).join('.') || 'body';
          if (!errors.some((e) => e.name === name)) errors.push({ name, details: issue.message });
        }
        return fail(res, 422, errors);
      }
      const { registration, created } = backend.register(env, parsed.data.topic, parsed.data.address);
      return send(res, created ? 201 : 200, { webhook: registration });
    }
    if (path === '/webhooks/keys' || path === '/api/v1/webhooks/keys') {
      if (req.method !== 'GET') return methodNotAllowed(req, res, 'GET');
      return send(res, 200, { webhook_secret: backend.secret(env) });
    }
    req.resume();
    return fail(res, 404, [{ name: 'path', details: `${url.pathname} is not found` }]);
  }
}

function methodNotAllowed(req: IncomingMessage, res: ServerResponse, allow: string): void {
  req.resume();
  fail(res, 405, [{ name: 'method', details: `${req.method ?? ''} is not allowed` }], { allow });
}
