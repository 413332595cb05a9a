import { withContext, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { startProgress } from '../lifecycle/progress.js';
import { runReconcilePass } from '../reconcile/pass.js';
import { daemonSettings, judgingSettings, settingsAsConfig, settingsDifferences } from '../reconcile/settings.js';
import type { ReconcileContext } from '../reconcile/pass.js';

export const command: Command = {
  summary: 'one reconciliation pass now, then exit',
  help: `Usage: bnpl-recon reconcile

Runs one reconciliation pass over the ledger of PROVIDER_ENV (missed_webhook, state_mismatch,
orphan_webhook, duplicate_event, duplicate_delivery, the payout kinds and the invoice kinds: every
kind but statement_unbalanced, which an import records) and prints its summary as
JSON on stdout; logs go to stderr. If another replica is running a pass, this one is skipped
(summary "skipped": true, exit 0).

It judges with the settings of the ledger's daemon: when a daemon (\`bnpl-recon start\`) has run a
pass in the last 48 hours, its recorded WEBHOOK_GRACE_SECONDS and PAYOUT_* settings are adopted in
place of this shell's (a warning names each difference, and the summary's "adoptedSettingsFrom"
names the daemon's pass). Otherwise this shell's settings apply.`,
  async run(argv) {
    if (argv.length > 0) throw new UsageError(`unexpected argument '${argv[0]}'`);
    return withContext('reconcile', {}, async (ctx) => {
      let passCtx: ReconcileContext = ctx;
      let adoptedSettingsFrom: number | undefined;
      const daemon = await daemonSettings(ctx.database.sql, ctx.config.PROVIDER_ENV);
      if (daemon) {
        const differences = settingsDifferences(judgingSettings(ctx.config), daemon.settings);
        if (differences.length > 0) {
          ctx.log.warn(
            { differences, daemonRunId: daemon.runId, daemonRunStartedAt: daemon.startedAt },
            `this shell's settings differ from the daemon's (${differences.join('; ')}): judging with the daemon's, as its pass ${daemon.runId} did`,
          );
          passCtx = { ...ctx, config: { ...ctx.config, PAYOUT_REFERENCE_PATTERN: undefined, ...settingsAsConfig(daemon.settings) } };
          adoptedSettingsFrom = daemon.runId;
        }
      }
      const progress = startProgress({ label: `reconcile ${ctx.config.PROVIDER_ENV}`, unit: 'steps', log: ctx.log });
      const summary = await runReconcilePass(passCtx, undefined, { signal: ctx.shutdown.signal, onStep: (steps) => progress.update(steps) }).finally(() => progress.finish());
      const out = adoptedSettingsFrom === undefined ? summary : { ...summary, adoptedSettingsFrom };
      process.stdout.write(`${JSON.stringify(out)}\n`);
      return 0;
    });
  },
};
