import { openContext, type AppContext, type OpenContextOptions } from '../daemon/context.js';
import { loadConfig, requireSettings } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { Shutdown, installSignalHandlers } from '../lifecycle/shutdown.js';
import { createLogger, wantsReadableLogs, type Logger, type LoggerOptions } from '../log/logger.js';

/** A command module: its help text and what it runs; returns the exit status. */
export interface Command {
  summary: string;
  help: string;
  run(argv: string[]): Promise<number>;
}

/** Exit status of a process whose cleanups outlived SHUTDOWN_TIMEOUT_MS (CONTRACT: 1, any other failure). */
export const EXIT_SHUTDOWN_DEADLINE = 1;

export interface ProcessOptions<K extends keyof Config> {
  /** Settings the command cannot run without: exit 2 naming the first missing one. */
  require?: K[];
  /** Defaults of this command that the environment may override (`demo` logs at warn). */
  defaults?: Partial<Record<keyof Config, string>>;
  /** Settings this command fixes whatever the environment says (`sim --log-level`). */
  overrides?: Partial<Record<keyof Config, string>>;
  /** Where log lines go: stderr unless the command's stdout is its log (the daemon). */
  logTo?: 'stdout' | 'stderr';
  logOptions?: LoggerOptions;
  /** A long-running service (`sim`): JSON logs even at a terminal, as `start` writes to stdout. */
  service?: boolean;
  /** The environment the settings are read from, instead of process.env (`demo` reads only a few). */
  env?: NodeJS.ProcessEnv;
}

export type RequiredConfig<K extends keyof Config> = { [P in K]-?: NonNullable<Config[P]> } & Config;

/** What every command's process has: its settings, its logger and its shutdown. */
export interface CommandProcess<K extends keyof Config> {
  config: RequiredConfig<K>;
  log: Logger;
  shutdown: Shutdown;
}

/**
 * The one way every command starts and stops: read and check the settings once, make the logger,
 * take SIGTERM/SIGINT as "drain and stop" (a second signal exits at once), run the body, and always
 * shut down in reverse order of what registered, within SHUTDOWN_TIMEOUT_MS: past it the process
 * exits with EXIT_SHUTDOWN_DEADLINE, naming what did not stop.
 */
export async function withProcess<K extends keyof Config, T>(
  name: string,
  options: ProcessOptions<K>,
  body: (process: CommandProcess<K>) => Promise<T>,
): Promise<T> {
  const env = { ...options.defaults, ...(options.env ?? process.env), ...options.overrides };
  const config = requireSettings(loadConfig(env), ...(options.require ?? []));
  const logTo = options.logTo ?? 'stderr';
  const readable = wantsReadableLogs(logTo, options.service ?? false, process.stderr.isTTY);
  const log = createLogger(config.LOG_LEVEL, logTo, { ...options.logOptions, readable });
  const shutdown = new Shutdown(log, config.SHUTDOWN_TIMEOUT_MS, () => {
    log.flush?.();
    process.exit(EXIT_SHUTDOWN_DEADLINE);
  });
  const removeSignalHandlers = installSignalHandlers(shutdown, log);
  try {
    return await body({ config, log, shutdown });
  } finally {
    await shutdown.run(`${name} done`);
    removeSignalHandlers();
  }
}

export type CommandContext<K extends keyof Config> = AppContext & { config: RequiredConfig<K> };

/**
 * A command that uses the ledger: `withProcess`, then the context (migrating unless it only reads),
 * whose pool closes last.
 */
export function withContext<K extends keyof Config, T>(
  name: string,
  options: ProcessOptions<K> & OpenContextOptions,
  body: (ctx: CommandContext<K>) => Promise<T>,
): Promise<T> {
  return withProcess(name, options, async ({ config, log, shutdown }) => {
    const ctx = await openContext(config, log, { migrate: config.MIGRATE_ON_START, ...options, shutdown });
    const running = body(ctx as CommandContext<K>);
    // The body is the last thing to stop: a signal's drain waits for it (within SHUTDOWN_TIMEOUT_MS)
    // before it closes the pool, so the work records how it ended (a reconcile pass its run row)
    // instead of failing on a closed pool, and a body that does not stop meets the deadline.
    shutdown.register(`${name} in progress`, () => running.then(() => undefined, () => undefined));
    return running;
  });
}
