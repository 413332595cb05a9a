import { openContext, type AppContext, type OpenContextOptions } from '../daemon/context.js';
import { loadConfig, requireSettings } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { installSignalHandlers } from '../lifecycle/shutdown.js';
import { createLogger } from '../log/logger.js';

/** A command module: its help text and what it runs; returns the exit status. */
export interface Command {
  summary: string;
  help: string;
  run(argv: string[]): Promise<number>;
}

export interface CommandContextOptions<K extends keyof Config> extends OpenContextOptions {
  /** Settings the command cannot run without: exit 2 naming the first missing one. */
  require?: K[];
}

export type CommandContext<K extends keyof Config> = AppContext & { config: { [P in K]-?: NonNullable<Config[P]> } & Config };

/**
 * What every command that uses the ledger does around its work: read and check the settings, log
 * to stderr (stdout is the command's output), open the context (migrating unless it reads only),
 * take SIGTERM/SIGINT as "drain and stop" like the daemon, and always shut down, the pool last.
 */
export async function withContext<K extends keyof Config, T>(
  name: string,
  options: CommandContextOptions<K>,
  body: (ctx: CommandContext<K>) => Promise<T>,
): Promise<T> {
  const config = requireSettings(loadConfig(), ...(options.require ?? []));
  const log = createLogger(config.LOG_LEVEL, 'stderr');
  const ctx = await openContext(config, log, { migrate: config.MIGRATE_ON_START, ...options });
  const removeSignalHandlers = installSignalHandlers(ctx.shutdown, log);
  try {
    return await body(ctx as CommandContext<K>);
  } finally {
    await ctx.shutdown.run(`${name} done`);
    removeSignalHandlers();
  }
}
