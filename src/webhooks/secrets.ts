import type { Logger } from '../log/logger.js';
import { secretFingerprint } from './signature.js';

/** Where the signing secrets come from: fixed (WEBHOOK_SECRET) or fetched from GET /webhooks/keys. */
export interface SecretSource {
  /** The secrets to verify with now; empty when none could be had yet. */
  current(): readonly string[];
  /**
   * Called after a signature failed to verify: refetch, at most once per minimum interval, so
   * forged requests cannot make us hammer the provider. Resolves true when the secrets changed.
   */
  refreshAfterFailure(): Promise<boolean>;
  start(): Promise<void>;
  stop(): void;
}

export function staticSecrets(secrets: readonly string[]): SecretSource {
  return {
    current: () => secrets,
    refreshAfterFailure: async () => false,
    start: async () => {},
    stop: () => {},
  };
}

export interface FetchedSecretsOptions {
  fetch: (signal: AbortSignal) => Promise<string[]>;
  refreshIntervalMs: number;
  minRefetchIntervalMs: number;
  fetchTimeoutMs: number;
  log: Logger;
  now?: () => number;
  /** Each fetch's outcome: changed (new secrets), unchanged, or failed. */
  onRefresh?: (outcome: 'changed' | 'unchanged' | 'failed') => void;
}

export function fetchedSecrets(options: FetchedSecretsOptions): SecretSource {
  const now = options.now ?? Date.now;
  let secrets: readonly string[] = [];
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<boolean> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const load = (reason: string): Promise<boolean> => {
    inFlight ??= (async () => {
      lastAttemptAt = now();
      try {
        const fetched = await options.fetch(AbortSignal.timeout(options.fetchTimeoutMs));
        if (fetched.length === 0) throw new Error('provider returned no webhook secret');
        const changed = fetched.join('\n') !== secrets.join('\n');
        // On rotation the provider may already sign with the new secret while deliveries signed with
        // the old one are still being retried: keep the previous ones too.
        secrets = [...new Set([...fetched, ...secrets])].slice(0, 4);
        options.log.info({ reason, keys: fetched.map(secretFingerprint), changed }, 'webhook secrets loaded');
        options.onRefresh?.(changed ? 'changed' : 'unchanged');
        return changed;
      } catch (error) {
        options.log.warn({ reason, err: (error as Error).message }, 'could not fetch webhook secrets');
        options.onRefresh?.('failed');
        return false;
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  };

  return {
    current: () => secrets,
    refreshAfterFailure: async () => {
      if (inFlight) return inFlight;
      if (now() - lastAttemptAt < options.minRefetchIntervalMs) return false;
      return load('signature check failed');
    },
    start: async () => {
      await load('startup');
      timer = setInterval(() => void load('scheduled refresh'), options.refreshIntervalMs);
      timer.unref();
    },
    stop: () => clearInterval(timer),
  };
}
