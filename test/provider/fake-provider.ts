import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A loopback stand-in for the provider's orders and webhook-set-up endpoints, strict where the real
 * one is strict: 500 requests in any 1 s window per client (429 + Retry-After), Api-Token checked
 * (401 with the spec's error body), newest-first paging that shifts when orders arrive mid-scan, and
 * faults on demand (5xx, malformed JSON, slow or stalled bodies, resets).
 */

export type Fault = 'server_error' | 'malformed_json' | 'slow_body' | 'stall' | 'reset' | 'unauthorized' | 'unprocessable' | 'truncated';

export interface FakeOrder {
  uuid: string;
  state: string;
  external_reference_id: string;
}

export interface RequestInfo {
  /** 1-based count of requests that passed the rate limit. */
  n: number;
  method: string;
  path: string;
  page?: number;
}

export interface FakeProviderOptions {
  apiKey: string;
  orders?: number;
  /** Requests per any 1 s window; 0 turns the limit off. */
  rateLimit?: number;
  retryAfter?: 'seconds' | 'date' | 'none';
  /** Largest page the server serves, whatever was asked. */
  maxPageSize?: number;
  /** Ignore the page parameter: always serve page 1. */
  ignorePaging?: boolean;
  pageParam?: string;
  perPageParam?: string;
  webhookPrefix?: string;
  webhookSecrets?: string[];
  keysShape?: 'object' | 'list';
  /** Echo the received Api-Token in 401 error details (to prove the client scrubs it). */
  echoKeyInErrors?: boolean;
  slowBodyMs?: number;
  fault?: (info: RequestInfo) => Fault | undefined;
  /** Called before a page is served: lets a test add orders mid-scan. */
  beforePage?: (info: RequestInfo, provider: FakeProvider) => void;
}

export interface FakeProviderStats {
  requests: number;
  accepted: number;
  throttled: number;
  unauthorized: number;
  faults: number;
  pages: number;
  registrations: { topic: string; address: string }[];
}

export function orderUuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

const STATES = ['authorized', 'pending', 'confirmed', 'declined', 'canceled', 'shipped', 'complete'];

export class FakeProvider {
  /** Oldest first; the API serves them newest first. */
  readonly orders: FakeOrder[] = [];
  readonly stats: FakeProviderStats = { requests: 0, accepted: 0, throttled: 0, unauthorized: 0, faults: 0, pages: 0, registrations: [] };
  private readonly window: Float64Array;
  private windowHead = 0;
  private windowCount = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private nextId = 1;
  /** Bodies built ahead by `precomputePages`, valid while the list keeps the length it had then. */
  private precomputed: { size: number; length: number; bodies: string[] } | undefined;

  constructor(readonly options: FakeProviderOptions) {
    this.window = new Float64Array(Math.max(1, options.rateLimit ?? 500));
    this.addOrders(options.orders ?? 0);
  }

  addOrders(count: number, state?: string): FakeOrder[] {
    const added: FakeOrder[] = [];
    for (let i = 0; i < count; i += 1) {
      const id = this.nextId++;
      const order = { uuid: orderUuid(id), state: state ?? STATES[id % STATES.length]!, external_reference_id: `ext-${id}` };
      this.orders.push(order);
      added.push(order);
    }
    return added;
  }

  /**
   * Builds every page body of `size` now, so serving one is a lookup (bench/poll/provider.ts: at
   * 500 pages/s, building each answer took a sizeable share of the 2-core machine the poller is
   * measured on). Used only while the list has not grown since; callers must not change states.
   */
  precomputePages(size: number): void {
    const bodies: string[] = [];
    for (let page = 1; (page - 1) * size <= this.orders.length; page += 1) bodies.push(this.pageBody(page, size));
    this.precomputed = { size, length: this.orders.length, bodies };
  }

  private pageBody(page: number, size: number): string {
    const end = this.orders.length - (page - 1) * size;
    const slice: FakeOrder[] = [];
    for (let i = end - 1; i >= Math.max(0, end - size); i -= 1) slice.push(this.orders[i]!);
    return JSON.stringify({ orders: slice.map((o) => ({ ...o, created_via: 'api', amount_cents: '1000' })), meta: { page } });
  }

  async listen(): Promise<string> {
    const server = createServer((req, res) => this.handle(req, res));
    server.keepAliveTimeout = 30_000;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Sliding window: at most `limit` accepted requests in any 1000 ms. Returns ms until a slot frees. */
  private admit(now: number): number {
    const limit = this.options.rateLimit ?? 500;
    if (limit === 0) return 0;
    if (this.windowCount < limit) {
      this.window[(this.windowHead + this.windowCount) % limit] = now;
      this.windowCount += 1;
      return 0;
    }
    const oldest = this.window[this.windowHead]!;
    if (now - oldest < 1000) return oldest + 1000 - now;
    this.window[this.windowHead] = now;
    this.windowHead = (this.windowHead + 1) % limit;
    return 0;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.stats.requests += 1;
    const wait = this.admit(performance.now());
    if (wait > 0) {
      this.stats.throttled += 1;
      const mode = this.options.retryAfter ?? 'seconds';
      if (mode === 'seconds') res.setHeader('retry-after', String(Math.ceil(wait / 1000)));
      if (mode === 'date') res.setHeader('retry-after', new Date(Date.now() + 1000 + wait).toUTCString());
      return this.json(res, 429, { status: 429, errors: [{ name: 'rate_limit', details: 'too many requests' }] });
    }
    this.stats.accepted += 1;
    const url = new URL(req.url ?? '/', 'http://fake');
    const info: RequestInfo = { n: this.stats.accepted, method: req.method ?? 'GET', path: url.pathname };
    const token = req.headers['api-token'];
    if (token !== this.options.apiKey) {
      this.stats.unauthorized += 1;
      const details = this.options.echoKeyInErrors ? `the key ${String(token)} is not valid` : 'is invalid';
      return this.json(res, 401, { status: 401, errors: [{ name: 'Api-Token', details }] });
    }
    const prefix = this.options.webhookPrefix ?? '';
    if (req.method === 'GET' && url.pathname === '/api/v1/orders') return this.ordersPage(url, info, res);
    if (req.method === 'GET' && url.pathname === `${prefix}/webhooks/keys`) {
      const secrets = this.options.webhookSecrets ?? ['whsec-test'];
      return this.json(res, 200, this.options.keysShape === 'list' ? secrets.map((s) => ({ webhook_secret: s })) : { webhook_secret: secrets[0] });
    }
    if (req.method === 'POST' && url.pathname === `${prefix}/webhooks`) return this.register(req, info, res);
    this.json(res, 404, { status: 404, errors: [{ name: 'path', details: 'not found' }] });
  }

  private ordersPage(url: URL, info: RequestInfo, res: ServerResponse): void {
    const page = this.options.ignorePaging ? 1 : Number(url.searchParams.get(this.options.pageParam ?? 'page') ?? '1');
    const asked = Number(url.searchParams.get(this.options.perPageParam ?? 'per_page') ?? '25');
    const size = Math.min(asked, this.options.maxPageSize ?? Number.POSITIVE_INFINITY);
    info.page = page;
    this.options.beforePage?.(info, this);
    const fault = this.options.fault?.(info);
    if (fault && this.fault(fault, res)) return;
    this.stats.pages += 1;
    const ready = this.precomputed;
    const cached = ready && ready.size === size && ready.length === this.orders.length ? ready.bodies[page - 1] : undefined;
    const body = cached ?? this.pageBody(page, size);
    if (fault === 'slow_body') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(body.slice(0, body.length >> 1));
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        res.end(body.slice(body.length >> 1));
      }, this.options.slowBodyMs ?? 50);
      this.timers.add(timer);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  }

  /** Returns true when the fault answered the request itself. */
  private fault(fault: Fault, res: ServerResponse): boolean {
    this.stats.faults += 1;
    switch (fault) {
      case 'server_error':
        this.json(res, 503, { status: 503, errors: [{ name: 'service', details: 'temporarily unavailable' }] });
        return true;
      case 'malformed_json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"orders": [{"uuid": ');
        return true;
      case 'truncated':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.end('{"orders": []');
        res.socket?.destroy();
        return true;
      case 'stall':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"orders": [');
        return true;
      case 'reset':
        res.socket?.destroy();
        return true;
      case 'unauthorized':
        this.json(res, 401, { status: 401, errors: [{ name: 'Api-Token', details: 'is invalid' }] });
        return true;
      case 'unprocessable':
        this.json(res, 422, { status: 422, errors: [{ name: 'per_page', details: 'must be an integer' }] });
        return true;
      case 'slow_body':
        return false;
    }
  }

  private register(req: IncomingMessage, info: RequestInfo, res: ServerResponse): void {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const fault = this.options.fault?.(info);
      if (fault && this.fault(fault, res)) return;
      let body: { topic?: unknown; address?: unknown } = {};
      try {
        body = JSON.parse(raw) as typeof body;
      } catch {
        // fall through to the validation answer
      }
      const errors = [];
      if (typeof body.topic !== 'string' || body.topic === '') errors.push({ name: 'topic', details: 'must be filled' });
      if (typeof body.address !== 'string' || body.address === '') errors.push({ name: 'address', details: 'is missing' });
      if (errors.length > 0) return this.json(res, 422, { status: 422, errors });
      this.stats.registrations.push({ topic: body.topic as string, address: body.address as string });
      this.json(res, 201, { topic: body.topic, address: body.address, uuid: orderUuid(900000 + this.stats.registrations.length) });
    });
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}
