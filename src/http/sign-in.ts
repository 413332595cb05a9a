import type { IncomingMessage } from 'node:http';
import { Counter, Registry } from 'prom-client';
import { clientAddress, senderKey, type AddressMatcher } from '../config/addresses.js';
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

/** Wrong tokens a source address may present within any SIGN_IN_WINDOW_MS before it is refused. */
export const SIGN_IN_MAX_FAILURES = 10;
export const SIGN_IN_WINDOW_MS = 60_000;
/** Addresses remembered at once: a spray from many addresses cannot grow the table without bound. */
const MAX_SOURCES = 10_000;

/**
 * Keeps the times of the last SIGN_IN_MAX_FAILURES wrong tokens per source address (a sliding
 * window: at most 10 numbers an address, 10,000 addresses); an address that sent
 * SIGN_IN_MAX_FAILURES within SIGN_IN_WINDOW_MS is refused (429), whatever token it sends, until the
 * oldest of them is a minute old, so guessing runs at 10 a minute per address instead of thousands a
 * second. A fixed window from the first wrong token let 19 through in a second across its boundary
 * (test/http/sign-in-throttle.test.ts). A missing token is no guess (the page asks before anyone
 * signed in) and does not count.
 */
export class SignInThrottle {
  /** Per address, its last wrong tokens' times, oldest first; the Map in order of the latest. */
  private readonly sources = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds until `source` may try again, or undefined when it may now. */
  retryAfterSeconds(source: string): number | undefined {
    const times = this.sources.get(source);
    if (!times) return undefined;
    const at = this.now();
    const latest = times[times.length - 1]!;
    if (at - latest >= SIGN_IN_WINDOW_MS) {
      this.sources.delete(source);
      return undefined;
    }
    if (times.length < SIGN_IN_MAX_FAILURES) return undefined;
    const left = times[0]! + SIGN_IN_WINDOW_MS - at;
    return left > 0 ? Math.ceil(left / 1000) : undefined;
  }

  failed(source: string): void {
    const at = this.now();
    const times = this.sources.get(source) ?? [];
    this.sources.delete(source);
    if (this.sources.size >= MAX_SOURCES) this.evict(at);
    times.push(at);
    if (times.length > SIGN_IN_MAX_FAILURES) times.shift();
    this.sources.set(source, times);
  }

  private evict(at: number): void {
    for (const [source, times] of this.sources) if (at - times[times.length - 1]! >= SIGN_IN_WINDOW_MS) this.sources.delete(source);
    // Still full: those whose latest wrong token is oldest go first (a Map iterates in insertion order).
    for (const source of this.sources.keys()) {
      if (this.sources.size < MAX_SOURCES) break;
      this.sources.delete(source);
    }
  }
}

/** What the operator API's sign-in check needs besides the tokens. */
export interface SignInGuard {
  /**
   * The caller, through TRUSTED_PROXIES like the receiver's, as the throttle counts it: an IPv4
   * address, an IPv6 address's /64 (config/addresses.ts senderKey says why).
   */
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
    sourceOf: (req) => senderKey(clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'] as string | undefined, options.trustedProxies) ?? 'unknown'),
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
