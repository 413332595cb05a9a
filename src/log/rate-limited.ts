import type { Logger } from 'pino';

export type LogLevel = 'error' | 'warn' | 'info';

/**
 * One kind of log line that anyone on the public port can cause (a bad signature, a wrong token):
 * written at most once per `intervalMs`, the lines held back in between counted and reported on the
 * next one written (`suppressed`), so a flood costs a line a minute while the metric counts every
 * occurrence. Each call site keeps its own limiter.
 */
export function rateLimitedLog(log: Logger, level: LogLevel, message: string, intervalMs = 60_000, now: () => number = Date.now): (fields: Record<string, unknown>) => void {
  let last = -Infinity;
  let suppressed = 0;
  return (fields) => {
    const at = now();
    if (at - last < intervalMs) {
      suppressed += 1;
      return;
    }
    last = at;
    log[level](suppressed > 0 ? { ...fields, suppressed, suppressedSeconds: Math.round(intervalMs / 1000) } : fields, message);
    suppressed = 0;
  };
}
