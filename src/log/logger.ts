import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout (or stderr for commands whose stdout is a report).
 * Secret-bearing fields are redacted by path so a careless `log.info({ config })` stays safe.
 */
export interface LoggerOptions {
  /** Lines to leave out (the demo summarises the refusals it injected itself instead of printing each). */
  drop?: (message: string) => boolean;
}

export function createLogger(level: string, destination: 'stdout' | 'stderr' = 'stdout', options: LoggerOptions = {}): Logger {
  const drop = options.drop;
  return pino(
    {
      level,
      ...(drop
        ? {
            hooks: {
              logMethod(args: unknown[], method: (...a: unknown[]) => void) {
                const message = args.find((a): a is string => typeof a === 'string');
                if (message !== undefined && drop(message)) return;
                method.apply(this, args);
              },
            },
          }
        : {}),
      base: { service: 'bnpl-recon' },
      // The number for machines that filter on it (pino's convention), the name for people.
      formatters: { level: (label: string, number: number) => ({ level: number, level_name: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'PROVIDER_API_KEY',
          'WEBHOOK_SECRET',
          'OPERATOR_TOKEN',
          'DATABASE_URL',
          '*.PROVIDER_API_KEY',
          '*.WEBHOOK_SECRET',
          '*.OPERATOR_TOKEN',
          '*.DATABASE_URL',
          'headers["api-token"]',
          'headers.authorization',
          '*.headers["api-token"]',
          '*.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: destination === 'stdout' ? 1 : 2, sync: false }),
  );
}

/** A logger that drops everything: for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
