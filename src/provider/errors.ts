/**
 * Provider failures in two families: retryable (429, 5xx, resets, timeouts, torn bodies on idempotent
 * requests) and not (401, 403, 422, other 4xx, a response that does not match the schema). Behaviour
 * keys on `status`, never on message texts (spec, Errors rule 4 and Versioning rule 2).
 *
 * Messages are built here from the method, the path and what the provider said; they never include
 * request headers, so the Api-Token cannot leak through them. Anything the provider echoes back is
 * passed through `scrub` as well, in case it repeats the key.
 */

export interface ProviderErrorDetail {
  name: string;
  details: string;
}

export interface RequestStats {
  /** HTTP attempts made, retries included. */
  requests: number;
  /** Attempts answered 429. */
  throttled: number;
  /** Attempts beyond the first. */
  retries: number;
}

export abstract class ProviderError extends Error {
  abstract readonly retryable: boolean;
  /** Filled in by the client: what the failed call cost before it gave up. */
  stats: RequestStats = { requests: 0, throttled: 0, retries: 0 };
}

/** The provider answered with a non-2xx status. */
export class ProviderHttpError extends ProviderError {
  override readonly name = 'ProviderHttpError';
  readonly retryable: boolean;
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly errors: ProviderErrorDetail[],
    readonly retryAfterMs?: number,
  ) {
    super(describeHttpError(method, path, status, errors));
    this.retryable = status === 429 || status >= 500;
  }
}

/** The response could not be used: not JSON, or not the expected shape. */
export class ProviderResponseError extends ProviderError {
  override readonly name = 'ProviderResponseError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** No usable response: refused, reset, timed out. `code` is undici's or the socket's. */
export class ProviderNetworkError extends ProviderError {
  override readonly name = 'ProviderNetworkError';
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

function describeHttpError(method: string, path: string, status: number, errors: ProviderErrorDetail[]): string {
  const hint =
    status === 401 || status === 403
      ? ' (check PROVIDER_API_KEY and that it belongs to PROVIDER_ENV; not retried)'
      : status === 422
        ? ' (the provider rejected the request as invalid; not retried)'
        : status === 429
          ? ' (rate limited; retries exhausted)'
          : status >= 500
            ? ' (provider failure; retries exhausted)'
            : ' (not retried)';
  const listed = errors.length > 0 ? `: ${errors.map((e) => `${e.name}: ${e.details}`).join('; ')}` : '';
  return `provider answered ${status} to ${method} ${path}${hint}${listed}`;
}

/** Replaces every occurrence of each secret with [redacted]. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    out = out.split(secret).join('[redacted]');
  }
  return out;
}
