import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout (or stderr for commands whose stdout is a report).
 * Secret-bearing fields are redacted by path so a careless `log.info({ config })` stays safe.
 */
export function createLogger(level: string, destination: 'stdout' | 'stderr' = 'stdout'): Logger {
  return pino(
    {
      level,
      base: { service: 'bnpl-recon' },
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
