import type { IncomingMessage } from 'node:http';
import { Counter, Registry } from 'prom-client';
import { clientAddress, type AddressMatcher } from '../config/addresses.js';
import type { Logger } from '../log/logger.js';
import { rateLimitedLog } from '../log/rate-limited.js';
import { METRIC_PREFIX } from '../metrics/registry.js';

/** Why a request to the operator API was not signed in. */
export const SIGN_IN_FAILURES = ['missing_token', 'wrong_token', 'throttled'] as const;
export type SignInFailure = (typeof SIGN_IN_FAILURES)[number];

export interface OperatorMetrics {
  signInFailures: Counter<'reason'>;
}

export function createOperatorMetrics(registry: Registry): OperatorMetrics {
  const signInFailures = new Counter({
    name: `${METRIC_PREFIX}operator_sign_in_failures_total`,
    help: 'Operator API requests refused for their bearer token, by reason (missing_token, wrong_token, throttled: too many wrong tokens from the address)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of SIGN_IN_FAILURES) signInFailures.inc({ reason }, 0);
  return { signInFailures };
}

/** Wrong tokens a source address may present per window before it is refused until the window ends. */
export const SIGN_IN_MAX_FAILURES = 10;
export const SIGN_IN_WINDOW_MS = 60_000;
/** Addresses remembered at once: a spray from many addresses cannot grow the table without bound. */
const MAX_SOURCES = 10_000;

/**
 * Counts wrong tokens per source address in a fixed window from the first one; at
 * SIGN_IN_MAX_FAILURES the address is refused (429) until the window ends, whatever token it
 * sends, so guessing runs at 10 a minute per address instead of thousands a second. A missing
 * token is no guess (the page asks before anyone signed in) and does not count.
 */
export class SignInThrottle {
  private readonly sources = new Map<string, { since: number; failures: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds until `source` may try again, or undefined when it may now. */
  retryAfterSeconds(source: string): number | undefined {
    const entry = this.sources.get(source);
    if (!entry) return undefined;
    const left = entry.since + SIGN_IN_WINDOW_MS - this.now();
    if (left <= 0) {
      this.sources.delete(source);
      return undefined;
    }
    return entry.failures >= SIGN_IN_MAX_FAILURES ? Math.ceil(left / 1000) : undefined;
  }

  failed(source: string): void {
    const at = this.now();
    const entry = this.sources.get(source);
    if (entry && at - entry.since < SIGN_IN_WINDOW_MS) {
      entry.failures += 1;
      return;
    }
    this.sources.delete(source);
    if (this.sources.size >= MAX_SOURCES) this.evict(at);
    this.sources.set(source, { since: at, failures: 1 });
  }

  private evict(at: number): void {
    for (const [source, entry] of this.sources) if (at - entry.since >= SIGN_IN_WINDOW_MS) this.sources.delete(source);
    // Still full: the oldest windows go first (a Map iterates in insertion order).
    for (const source of this.sources.keys()) {
      if (this.sources.size < MAX_SOURCES) break;
      this.sources.delete(source);
    }
  }
}

/** What the operator API's sign-in check needs besides the tokens. */
export interface SignInGuard {
  /** The caller's address, through TRUSTED_PROXIES like the receiver's. */
  sourceOf(req: IncomingMessage): string;
  throttle: SignInThrottle;
  /** Counts the refusal and writes its (rate-limited) log line. */
  refused(reason: SignInFailure, source: string): void;
}

export function signInGuard(options: { trustedProxies: AddressMatcher; log: Logger; metrics: OperatorMetrics }): SignInGuard {
  const { metrics } = options;
  // One limiter per reason: the page's requests before sign-in (missing_token) never hide guessing.
  const lines = Object.fromEntries(SIGN_IN_FAILURES.map((reason) => [reason, rateLimitedLog(options.log, 'warn', 'operator sign-in refused')])) as Record<SignInFailure, ReturnType<typeof rateLimitedLog>>;
  return {
    sourceOf: (req) => clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'] as string | undefined, options.trustedProxies) ?? 'unknown',
    throttle: new SignInThrottle(),
    refused(reason, source) {
      metrics.signInFailures.inc({ reason });
      lines[reason]({ reason, source });
    },
  };
}

/** For a router built without the daemon's registry (tests, tools): its metrics on a registry of their own. */
export function privateOperatorMetrics(): OperatorMetrics {
  return createOperatorMetrics(new Registry());
}
