/**
 * Retry delays: exponential backoff with full jitter (delay uniform in [0, min(cap, base * 2^n)]),
 * so clients that failed together do not retry together. A Retry-After from the provider is a
 * floor: the retry never comes earlier than the provider asked.
 */

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
  /** Longest Retry-After waited for; with a longer one the call fails instead (provider/client.ts). */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 100, capMs: 10_000, maxRetryAfterMs: 60_000 };

export function fullJitterDelayMs(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, retry));
  return Math.floor(random() * ceiling);
}

/**
 * Retry-After is either delay-seconds or an HTTP-date (RFC 9110 section 10.2.3). Fractional seconds
 * are accepted although the RFC allows only integers: some rate limiters send them. Returns
 * undefined when absent or unparseable.
 */
export function parseRetryAfterMs(value: string | string[] | undefined, nowMs: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/**
 * The delay before retry number `retry` (0-based): jitter, but never before Retry-After. The
 * jitter's exponential window applies with a Retry-After too, so a Retry-After of 0 (or of a time
 * already past) still backs off as the spec recommends on 429, instead of sending every retry at once.
 */
export function retryDelayMs(
  retry: number,
  retryAfterMs: number | undefined,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const jitter = fullJitterDelayMs(retry, policy, random);
  if (retryAfterMs === undefined) return jitter;
  // A little jitter on top of the floor, so every throttled request does not come back at once.
  return Math.max(retryAfterMs, jitter) + Math.floor(random() * Math.min(policy.baseMs, jitter + 1));
}

/** setTimeout that an AbortSignal cuts short (rejecting with the signal's reason). */
export function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
