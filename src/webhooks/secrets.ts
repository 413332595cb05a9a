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
  /**
   * How long a secret the provider stopped returning still verifies: deliveries signed before a
   * rotation may still be arriving, but a rotation after a leak must take effect (issue 10).
   */
  retiredOverlapMs: number;
  log: Logger;
  now?: () => number;
  /** Each fetch's outcome: changed (new secrets), unchanged, or failed. */
  onRefresh?: (outcome: 'changed' | 'unchanged' | 'failed') => void;
}

export function fetchedSecrets(options: FetchedSecretsOptions): SecretSource {
  const now = options.now ?? Date.now;
  // Each secret with when the provider last returned it, and when a fetch first left it out.
  const known = new Map<string, { seen: number; retiredAt?: number }>();
  let latest: readonly string[] = [];
  let secrets: readonly string[] = [];
  let nextExpiry = Number.POSITIVE_INFINITY;
  const recompute = (at: number) => {
    for (const [secret, { retiredAt }] of known) {
      if (retiredAt !== undefined && at - retiredAt >= options.retiredOverlapMs) {
        known.delete(secret);
        options.log.info({ key: secretFingerprint(secret) }, 'webhook secret retired: no longer returned by the provider and past the overlap');
      }
    }
    // Newest first: the secret that verifies most deliveries is tried first.
    secrets = [...known].sort((x, y) => y[1].seen - x[1].seen).map(([secret]) => secret);
    const expiries = [...known.values()].flatMap(({ retiredAt }) => (retiredAt === undefined ? [] : [retiredAt + options.retiredOverlapMs]));
    nextExpiry = expiries.length > 0 ? Math.min(...expiries) : Number.POSITIVE_INFINITY;
  };
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<boolean> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const load = (reason: string): Promise<boolean> => {
    inFlight ??= (async () => {
      lastAttemptAt = now();
      try {
        const fetched = await options.fetch(AbortSignal.timeout(options.fetchTimeoutMs));
        if (fetched.length === 0) throw new Error('provider returned no webhook secret');
        const changed = fetched.join('\n') !== latest.join('\n');
        // On rotation the provider may already sign with the new secret while deliveries signed with
        // the old one are still being retried: the old ones verify for retiredOverlapMs more.
        const at = now();
        for (const [secret, entry] of known) if (!fetched.includes(secret)) entry.retiredAt ??= at;
        for (const secret of fetched) known.set(secret, { seen: at });
        latest = fetched;
        recompute(at);
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
    current: () => {
      if (nextExpiry !== Number.POSITIVE_INFINITY && now() >= nextExpiry) recompute(now());
      return secrets;
    },
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
