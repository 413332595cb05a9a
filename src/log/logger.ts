import { pino, type Logger } from 'pino';
import { needsQuotes, printable } from './printable.js';

export type { Logger };

/**
 * Structured JSON logs on stdout (or stderr for commands whose stdout is a report).
 * Secret-bearing fields are redacted by path so a careless `log.info({ config })` stays safe.
 */
export interface LoggerOptions {
  /** Lines to leave out (the demo summarises the refusals it injected itself instead of printing each). */
  drop?: (message: string) => boolean;
  /** Short readable lines instead of JSON (a person at a terminal; see `wantsReadableLogs`). */
  readable?: boolean;
}

/**
 * A one-off command run by a person (its stderr a terminal) logs readable lines; a service, or any
 * output a program collects (a pipe, a file, journald), keeps JSON, which log shippers parse.
 */
export function wantsReadableLogs(destination: 'stdout' | 'stderr', service: boolean, isTTY: boolean | undefined): boolean {
  return !service && destination === 'stderr' && isTTY === true;
}

const HIDDEN = new Set(['level', 'level_name', 'time', 'service', 'pid', 'hostname', 'msg']);

/** One JSON log line as `HH:MM:SS level message key=value …` (the time in UTC, as in JSON). */
export function readableLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof entry['time'] === 'string' ? entry['time'].slice(11, 19) : '';
  const level = String(entry['level_name'] ?? entry['level'] ?? '');
  const fields = Object.entries(entry)
    .filter(([k]) => !HIDDEN.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' && !needsQuotes(v) ? v : printable(JSON.stringify(v) ?? String(v))}`);
  return `${[time, level === 'info' ? '' : level.toUpperCase(), printable(String(entry['msg'] ?? '')), ...fields].filter((p) => p !== '').join(' ')}\n`;
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
          'OPERATOR_TOKENS[*].token',
          'DATABASE_URL',
          '*.PROVIDER_API_KEY',
          '*.WEBHOOK_SECRET',
          '*.OPERATOR_TOKEN',
          '*.OPERATOR_TOKENS[*].token',
          '*.DATABASE_URL',
          'headers["api-token"]',
          'headers.authorization',
          '*.headers["api-token"]',
          '*.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    options.readable
      ? { write: (line: string) => void (destination === 'stdout' ? process.stdout : process.stderr).write(readableLine(line.trimEnd())) }
      : pino.destination({ dest: destination === 'stdout' ? 1 : 2, sync: false }),
  );
}

/** A logger that drops everything: for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
