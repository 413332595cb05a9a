import type { Command } from '../cli.js';
import { UsageError } from '../app/errors.js';
import { loadConfig, requireSettings } from '../config/load.js';
import { startDaemon } from '../daemon.js';
import { installSignalHandlers } from '../lifecycle/shutdown.js';
import { createLogger } from '../log/logger.js';

export const command: Command = {
  summary: 'run the daemon until SIGTERM/SIGINT',
  help: `Usage: bnpl-recon start

Runs the daemon: the webhook receiver and operator API on PORT, /metrics on METRICS_PORT, the
poller on POLL_SCHEDULE, reconciliation on RECONCILE_SCHEDULE and after every complete poll.
Needs PROVIDER_BASE_URL and PROVIDER_API_KEY; every setting is an environment variable (README).
The first SIGTERM/SIGINT drains: stop accepting, finish in-flight deliveries and passes, release
locks, close the pool; a second one exits at once.`,
  async run(argv) {
    if (argv.length > 0) throw new UsageError(`unexpected argument '${argv[0]}'`);
    const config = requireSettings(loadConfig(), 'PROVIDER_BASE_URL', 'PROVIDER_API_KEY');
    const log = createLogger(config.LOG_LEVEL);
    const daemon = await startDaemon(config, log);
    installSignalHandlers(daemon.ctx.shutdown, log);
    await new Promise<void>((resolve) => daemon.ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
    await daemon.ctx.shutdown.run('signal');
    return 0;
  },
};
