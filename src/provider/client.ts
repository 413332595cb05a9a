import { Pool } from 'undici';
import { isLoopbackHost, type Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { DEFAULT_BACKOFF, abortableDelay, parseRetryAfterMs, retryDelayMs, type BackoffPolicy } from './backoff.js';
import {
  ProviderError,
  ProviderHttpError,
  ProviderNetworkError,
  ProviderResponseError,
  scrub,
  type RequestStats,
} from './errors.js';
import type { ProviderMetrics, ProviderOperation, RequestOutcome } from './metrics.js';
import { RateLimiter } from './rate-limiter.js';
import { errorBodySchema, parseOrdersPage, webhookKeysSchema, type ProviderOrder } from './schemas.js';
import { MAX_INDEXED_TEXT_LENGTH, UNSTORABLE_TEXT } from '../db/text.js';

export const ORDERS_PATH = '/api/v1/orders';

export interface OrdersPage {
  orders: ProviderOrder[];
  stats: RequestStats;
}

export interface ProviderClient {
  getOrdersPage(page: number, perPage: number, signal?: AbortSignal): Promise<OrdersPage>;
  fetchWebhookSecrets(signal?: AbortSignal): Promise<string[]>;
  /** POST {prefix}/webhooks. Returns the provider's HTTP status (the body is not specified). */
  registerWebhook(topic: string, address: string, signal?: AbortSignal): Promise<{ status: number }>;
  /** The process-wide request budget, exposed for metrics and tests. */
  readonly limiter: RateLimiter;
  close(): Promise<void>;
}

export interface ProviderClientOptions {
  backoff?: BackoffPolicy;
  /** Share one budget between clients (tests); by default each client owns one. */
  limiter?: RateLimiter;
}

// Failures before the request reached the provider: safe to retry even for a POST.
const CONNECT_PHASE_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
// Failures after it may have been processed: retried for idempotent requests only.
const TRANSIENT_CODES = new Set([
  ...CONNECT_PHASE_CODES,
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ATTEMPT_TIMEOUT',
]);

/**
 * The most the client reads of one answer. A page of orders is kilobytes (a few megabytes at the
 * largest POLL_PAGE_SIZE anyone uses); a body that never ends was read whole into memory before
 * this bound, 1.7 GB in 4 s over loopback (test/poller/hostile-provider.test.ts), enough to kill
 * the daemon within the default 30 s body timeout.
 */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** The body as text, or undefined (the body destroyed) once it passes `limit` bytes. */
async function boundedText(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

interface Call<T> {
  operation: ProviderOperation;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  idempotent: boolean;
  parse: (json: unknown, status: number) => T;
  signal: AbortSignal | undefined;
}

export function createProviderClient(config: Config, log: Logger, metrics: ProviderMetrics, options: ProviderClientOptions = {}): ProviderClient {
  if (config.PROVIDER_BASE_URL === undefined) throw new Error('PROVIDER_BASE_URL is not set');
  if (config.PROVIDER_API_KEY === undefined) throw new Error('PROVIDER_API_KEY is not set');
  const apiKey = config.PROVIDER_API_KEY;
  const secrets = [apiKey];
  const base = new URL(config.PROVIDER_BASE_URL);
  // Production refuses this at config load (config/schema.ts); elsewhere it is said once, loudly.
  if (base.protocol === 'http:' && !isLoopbackHost(base.hostname)) {
    log.warn({ host: base.host }, 'PROVIDER_BASE_URL is plain http: the API key (Api-Token) travels in clear; use https');
  }
  const basePath = base.pathname.replace(/\/+$/, '');
  const webhookPrefix = config.PROVIDER_WEBHOOK_PATH_PREFIX.replace(/\/+$/, '');
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const limiter = options.limiter ?? new RateLimiter({ ratePerSecond: config.RATE_LIMIT_RPS });
  const pool = new Pool(base.origin, {
    // One spare connection beyond the poller's page workers for webhook-key refreshes.
    connections: config.POLL_CONCURRENCY + 2,
    connect: { timeout: config.HTTP_CONNECT_TIMEOUT_MS },
    headersTimeout: config.HTTP_BODY_TIMEOUT_MS,
    bodyTimeout: config.HTTP_BODY_TIMEOUT_MS,
    keepAliveTimeout: 10_000,
  });
  metrics.reportRate(() => limiter.currentRate());
  const headers = { 'api-token': apiKey, 'content-type': 'application/json', accept: 'application/json' };

  const count = (operation: ProviderOperation, outcome: RequestOutcome) => metrics.requests.inc({ operation, outcome });

  async function attempt<T>(call: Call<T>): Promise<{ value: T } | { failure: ProviderError; sentAt: number }> {
    const waitStart = performance.now();
    const sentAt = await limiter.acquire(call.signal);
    metrics.rateLimitWait.observe({ operation: call.operation }, (performance.now() - waitStart) / 1000);
    // bodyTimeout is the idle gap between chunks; a body that trickles would never trip it, so each
    // attempt also has an overall deadline.
    const deadline = AbortSignal.timeout(config.HTTP_BODY_TIMEOUT_MS + config.HTTP_CONNECT_TIMEOUT_MS);
    const signal = call.signal ? AbortSignal.any([call.signal, deadline]) : deadline;
    const endTimer = metrics.duration.startTimer({ operation: call.operation });
    try {
      let response;
      try {
        response = await pool.request({ origin: base.origin, path: `${basePath}${call.path}`, method: call.method, headers, body: call.body ?? null, signal });
      } finally {
        // The headers (or the failure) are in: the provider counted this request, if at all, by now.
        limiter.answered();
      }
      const text = await boundedText(response.body, MAX_RESPONSE_BYTES);
      endTimer();
      const status = response.statusCode;
      if (text === undefined) {
        count(call.operation, 'bad_response');
        // Not retried: the same request would most likely get the same endless answer.
        return { failure: new ProviderResponseError(`provider answered ${status} to ${call.method} ${call.path} with a body larger than ${MAX_RESPONSE_BYTES / 1048576} MiB`, false), sentAt };
      }
      if (status >= 200 && status < 300) {
        let json: unknown;
        try {
          json = text.length === 0 ? null : JSON.parse(text);
        } catch {
          count(call.operation, 'bad_response');
          // A torn or garbled body (proxy trouble) is worth another try when repeating is harmless.
          return { failure: new ProviderResponseError(`provider answered ${status} to ${call.method} ${call.path} with a body that is not JSON`, call.idempotent), sentAt };
        }
        try {
          const value = call.parse(json, status);
          count(call.operation, 'ok');
          return { value };
        } catch (error) {
          count(call.operation, 'bad_response');
          const issues = scrub(String((error as Error).message ?? error), secrets).slice(0, 500);
          return { failure: new ProviderResponseError(`provider answered ${status} to ${call.method} ${call.path} with an unexpected shape: ${issues}`, false), sentAt };
        }
      }
      let parsed: { errors: { name: string; details: string }[] } = { errors: [] };
      try {
        const body = errorBodySchema.safeParse(JSON.parse(text));
        if (body.success) parsed = body.data;
      } catch {
        // Not every error answer (a proxy's 502 page, for one) has the spec's JSON error body.
      }
      const errors = parsed.errors.map((e) => ({ name: scrub(e.name, secrets), details: scrub(e.details, secrets) }));
      const retryAfterMs = parseRetryAfterMs(response.headers['retry-after'], providerNowMs(response.headers.date));
      count(call.operation, status === 429 ? 'throttled' : status === 401 || status === 403 ? 'unauthorized' : status >= 500 ? 'server_error' : 'client_error');
      return { failure: new ProviderHttpError(call.method, call.path, status, errors, retryAfterMs), sentAt };
    } catch (error) {
      endTimer();
      if (call.signal?.aborted) throw call.signal.reason;
      const timedOut = deadline.aborted;
      const code = timedOut ? 'ATTEMPT_TIMEOUT' : errorCodeOf(error);
      const retryable = code !== undefined && (CONNECT_PHASE_CODES.has(code) || (call.idempotent && TRANSIENT_CODES.has(code)));
      const reason = timedOut ? 'no complete answer in time' : scrub(String((error as Error).message ?? error), secrets);
      count(call.operation, 'network_error');
      return { failure: new ProviderNetworkError(`${call.method} ${call.path} failed: ${reason}${code ? ` (${code})` : ''}`, code, retryable), sentAt };
    }
  }

  async function request<T>(call: Call<T>): Promise<{ value: T; stats: RequestStats }> {
    const stats: RequestStats = { requests: 0, throttled: 0, retries: 0 };
    for (let retry = 0; ; retry += 1) {
      if (retry > 0) {
        stats.retries += 1;
        metrics.retries.inc({ operation: call.operation });
      }
      stats.requests += 1;
      const outcome = await attempt(call);
      if ('value' in outcome) return { value: outcome.value, stats };
      const { failure } = outcome;
      let retryAfterMs: number | undefined;
      let retryable = failure.retryable;
      if (failure instanceof ProviderHttpError) {
        // A 503 may say when to come back as a 429 does (RFC 9110 section 10.2.3): both are honoured.
        retryAfterMs = failure.retryAfterMs;
        if (failure.status === 429) {
          stats.throttled += 1;
          // Every request waits for the Retry-After, not only this one's retry; one longer than this
          // client waits fails this call below and pauses the others for that longest wait only.
          limiter.onThrottled(outcome.sentAt, retryAfterMs === undefined ? undefined : Math.min(retryAfterMs, backoff.maxRetryAfterMs));
        } else if (!call.idempotent) {
          // A 5xx to a POST may have registered the webhook anyway; a blind retry could duplicate it.
          retryable = false;
        }
      }
      if (!retryable || retry >= config.HTTP_MAX_RETRIES) {
        failure.stats = stats;
        throw failure;
      }
      if (retryAfterMs !== undefined && retryAfterMs > backoff.maxRetryAfterMs) {
        // Retrying sooner than asked would not honour it, and waiting longer holds the caller (a
        // poll, a key refresh) past any sensible bound: the call fails, saying so.
        failure.stats = stats;
        failure.message += ` (Retry-After ${Math.round(retryAfterMs / 1000)} s is longer than the ${backoff.maxRetryAfterMs / 1000} s this client waits: not retried)`;
        throw failure;
      }
      const delay = retryDelayMs(retry, retryAfterMs, backoff);
      log.debug({ operation: call.operation, path: call.path, retry: retry + 1, delayMs: delay, reason: failure.message }, 'retrying provider request');
      await abortableDelay(delay, call.signal);
    }
  }

  let closing: Promise<void> | undefined;
  return {
    limiter,
    async getOrdersPage(page, perPage, signal) {
      const query = new URLSearchParams({ [config.POLL_PAGE_PARAM]: String(page), [config.POLL_PAGE_SIZE_PARAM]: String(perPage) });
      const { value, stats } = await request({
        operation: 'orders',
        method: 'GET',
        path: `${ORDERS_PATH}?${query.toString()}`,
        idempotent: true,
        parse: (json) =>
          parseOrdersPage(json, (uuid, field, repair) =>
            log.warn({ order: uuid, field, page }, repair === 'too_long'
              ? `provider order ${uuid}: its ${field} is longer than ${MAX_INDEXED_TEXT_LENGTH} characters; stored cut to them`
              : `provider order ${uuid}: its ${field} holds ${UNSTORABLE_TEXT}; stored with U+FFFD in its place`)),
        signal,
      });
      return { orders: value, stats };
    },
    async fetchWebhookSecrets(signal) {
      const { value } = await request({
        operation: 'webhook_keys',
        method: 'GET',
        path: `${webhookPrefix}/webhooks/keys`,
        idempotent: true,
        parse: (json) => webhookKeysSchema.parse(json),
        signal,
      });
      return [...new Set(value)];
    },
    async registerWebhook(topic, address, signal) {
      const { value } = await request({
        operation: 'webhook_register',
        method: 'POST',
        path: `${webhookPrefix}/webhooks`,
        body: JSON.stringify({ topic, address }),
        idempotent: false,
        parse: (_json, status) => ({ status }),
        signal,
      });
      return value;
    },
    close() {
      closing ??= pool.close();
      return closing;
    },
  };
}

function errorCodeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The provider's clock as its answer's `Date` header states it, else ours: a Retry-After given as
 * an HTTP-date is a time on the provider's clock, so it is measured from the provider's now. With
 * its clock 5 s behind ours, "in 2 s" read against ours was 3 s past: no wait at all, and every
 * retry spent inside the throttled second (test/provider/retry-after-clock-skew.test.ts).
 */
function providerNowMs(date: string | string[] | undefined): number {
  const stated = Date.parse((Array.isArray(date) ? date[0] : date) ?? '');
  return Number.isNaN(stated) ? Date.now() : stated;
}
