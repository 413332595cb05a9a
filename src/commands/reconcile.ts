import { withContext, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { startProgress } from '../lifecycle/progress.js';
import { runReconcilePass } from '../reconcile/pass.js';

export const command: Command = {
  summary: 'one reconciliation pass now, then exit',
  help: `Usage: bnpl-recon reconcile

Runs one reconciliation pass over the ledger of PROVIDER_ENV (missed_webhook, state_mismatch,
orphan_webhook, duplicate_event, duplicate_delivery; WEBHOOK_GRACE_SECONDS applies) and prints its
summary as JSON on stdout; logs go to stderr. If another replica is running a pass, this one is
skipped (summary "skipped": true, exit 0).`,
  async run(argv) {
    if (argv.length > 0) throw new UsageError(`unexpected argument '${argv[0]}'`);
    return withContext('reconcile', {}, async (ctx) => {
      const progress = startProgress({ label: `reconcile ${ctx.config.PROVIDER_ENV}`, unit: 'steps', log: ctx.log });
      const summary = await runReconcilePass(ctx, new Date(), { onStep: (steps) => progress.update(steps) }).finally(() => progress.finish());
      process.stdout.write(`${JSON.stringify(summary)}\n`);
      return 0;
    });
  },
};
