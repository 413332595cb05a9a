import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Whether an error is worth another attempt (a transient database error, a lost insert race). */
  retryOn: (error: unknown) => boolean;
  /** Milliseconds to wait before attempt `attempt + 1`; none when absent (a race is retried at once). */
  delayMs?: (attempt: number) => number;
  /** Stops the wait (shutdown, a lost lock): the wait rejects with the signal's reason. */
  signal?: AbortSignal;
  onRetry?: (error: unknown, attempt: number) => void;
}

/**
 * Runs `work` until it succeeds, fails with an error the policy does not retry, or has used its
 * attempts; the one retry loop of every database write that may meet a passing failure.
 */
export async function retrying<T>(work: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= policy.attempts || !policy.retryOn(error)) throw error;
      policy.onRetry?.(error, attempt);
      const wait = policy.delayMs?.(attempt) ?? 0;
      if (wait > 0) await sleep(wait, undefined, policy.signal ? { signal: policy.signal } : undefined);
      else policy.signal?.throwIfAborted();
    }
  }
}
