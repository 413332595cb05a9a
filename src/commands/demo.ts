import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { withProcess, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { loadConfig } from '../config/load.js';
import { startDaemon, type Daemon } from '../daemon/daemon.js';
import { removeEmbeddedLedger } from '../db/embedded.js';
import { badSignatureCount, demoSummary } from './demo-summary.js';
import { DEFAULT_CONTRACT_TERMS, startSimulator } from '../../sim/index.js';
import { DEMO_BUSINESS, DEMO_FAULT_RATES } from './demo-settings.js';
import { importStatementFile } from '../statements/import.js';
import { importPayoutReportFile, isRefusal } from '../payout-import/file.js';
import { SUBSCRIPTION_TOPICS } from '../provider/vocabulary.js';

const HELP = `Usage: bnpl-recon demo [--duration SECONDS] [--seed N] [--time-scale S]

Runs the whole daemon on an embedded Postgres (under RECON_DATA_DIR/demo, wiped at start) against
the bundled provider simulator with faults injected: missed, repeated, reordered, late and doubled
webhooks, orders no webhook mentions, webhooks for orders the API does not know, payout faults, and
invoice-to-cash faults (invoices paid twice or paid though canceled, deductions off the contract,
payout reports that disagree with their payout, buyers paying the merchant directly). The merchant's
bank statement and the provider's payout reports are imported every 20 s, judged by the simulator's
contract (CONTRACT_TERMS).
The simulator plays 2.4 simulated hours per real second (--time-scale 8640), so a minute holds six
simulated days: orders ship, and invoices are paid out four times a day, with payout faults more
frequent than the simulator's defaults. In that minute every kind of discrepancy shows but four:
payout_not_on_statement and invoice_not_paid_out need PAYOUT_SETTLEMENT_DAYS and
INVOICE_PAYOUT_DAYS of real time, state_mismatch is never injected (the simulator keeps every
order's webhooks consistent with its API), and statement_unbalanced neither (its bank statements
always balance). The daemon polls and reconciles every 5 seconds with a
10-second grace period, so discrepancies appear within a minute.

At each summary it also checks, from the simulator's record of every attempt, that each delivery
answered 2xx is stored (deliveries acknowledged but not stored: 0), that every 401 went to a copy
signed with the wrong key and none of those got a 2xx; anything else is called a difference.

It prints the URLs to open (receiver, metrics, operator API with a bearer token made for this run)
and, every 10 seconds, the open discrepancies by kind. Stops on Ctrl-C, or after --duration seconds.

  --duration SECONDS   stop by itself after this long (default: run until interrupted)
  --seed N             the simulator's seed (default 1): the same seed plays the same business
  --time-scale S       simulated milliseconds per real millisecond (default 8640)
  RECON_DATA_DIR (the ledger goes under RECON_DATA_DIR/demo), PORT, METRICS_PORT, LOG_LEVEL
  (default warn here), DISPLAY_TIME_ZONE and SHUTDOWN_TIMEOUT_MS apply as for start; HOST
  defaults to 127.0.0.1 here (the demo prints a bearer token), set
  HOST=0.0.0.0 to listen on every address. Other settings in the environment are ignored: the
  demo's provider, ledger and schedules are its own.

Exit status: 0; 1 when the final summary names a difference it calls a defect (a delivery
answered 2xx but not stored, refused though correctly signed, or never answered 2xx; a finding the
simulator's ground truth does not explain), or with --duration when settling failed.`;


function formatSimulated(timeScale: number): string {
  const minutes = timeScale / 60;
  return minutes >= 1 ? `${Number(minutes.toFixed(1))} simulated minutes` : `${Number(timeScale.toFixed(1))} simulated seconds`;
}

/**
 * The settings a demo takes from its environment: where it listens, what it logs, how the page
 * shows times, how long it may take to stop. Everything else is the demo's own: a shell holding the
 * real provider's settings (WEBHOOK_SIGNATURE_HEADER, WEBHOOK_ALLOWED_IPS, PAYOUT_REPORT_COLUMNS,
 * POLL_PAGE_PARAM, ...) made the daemon refuse or misread its own simulator (every delivery 401 or
 * 403, nothing stored).
 */
const DEMO_PASSED_THROUGH = ['RECON_DATA_DIR', 'PORT', 'METRICS_PORT', 'HOST', 'LOG_LEVEL', 'DISPLAY_TIME_ZONE', 'SHUTDOWN_TIMEOUT_MS'] as const;

function passedThrough(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of DEMO_PASSED_THROUGH) {
    const value = env[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

export const command: Command = {
  summary: 'the daemon on embedded Postgres against the bundled simulator, faults on',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { duration: { type: 'string' }, seed: { type: 'string' }, 'time-scale': { type: 'string' } },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const duration = values.duration === undefined ? undefined : Number(values.duration);
    if (duration !== undefined && !(duration > 0)) throw new UsageError('--duration must be a positive number of seconds');
    // Six simulated days a minute: invoices ship a day or more after their order and payouts run
    // daily, so a slower default showed the invoice-to-cash kinds in a minute only by chance.
    const timeScale = Number(values['time-scale'] ?? 8640);
    if (!(timeScale > 0)) throw new UsageError('--time-scale must be positive');
    const graceSeconds = Math.max(10, Math.ceil(1860 / timeScale) + 5);

    // The simulator signs some copies with the other environment's key on purpose: those refusals
    // are summarised against the ground truth instead of logged. The summary counts them from
    // bnpl_recon_webhook_deliveries_total{outcome="bad_signature"}, which counts every one (the log
    // line is rate-limited to one a minute, so it cannot be counted).
    const logOptions = { drop: (message: string) => message === 'webhook refused: bad or missing signature' };
    // Only these are read at all: a shell's other settings, even ones that would stop `start`
    // (RATE_LIMIT_RPS above the provider's limit), are not the demo's.
    return withProcess('demo', { defaults: { LOG_LEVEL: 'warn' }, logOptions, env: passedThrough(process.env) }, async ({ config: base, log, shutdown }) => {
      const dataDir = path.join(base.RECON_DATA_DIR, 'demo');
      const out = process.stdout;
      // A reader that went away (`demo | head -40`) stops the demo as Ctrl-C would: unhandled, the
      // next summary's EPIPE crashed it with a stack trace and left its embedded Postgres running.
      // Any other failure to write stdout stops it too, said once on stderr.
      const onStdoutError = (error: NodeJS.ErrnoException) => {
        if (shutdown.isShuttingDown) return;
        if (error.code !== 'EPIPE') log.error({ err: error.message, code: error.code }, 'the demo cannot write its summaries to stdout: stopping');
        void shutdown.run(error.code === 'EPIPE' ? 'stdout closed' : 'stdout failed');
      };
      out.on('error', onStdoutError);
      // Refused while another demo runs there; an orphaned server (after a kill -9) is stopped first.
      await removeEmbeddedLedger(dataDir, log);

      const sim = await startSimulator({
        seed: values.seed ?? 1,
        timeScale,
        startTime: new Date().toISOString(),
        // Every kind the simulator injects shows in a minute (demo-settings.ts).
        faults: DEMO_FAULT_RATES,
        business: DEMO_BUSINESS,
        graceMs: graceSeconds * 1000 * timeScale,
        log: log.child({ component: 'simulator' }),
      });
      const operatorToken = randomBytes(18).toString('base64url');
      let daemon: Daemon;
      try {
        const config = loadConfig({
          ...passedThrough(process.env),
          LOG_LEVEL: base.LOG_LEVEL,
          // It prints a bearer token: loopback only, unless HOST says otherwise.
          HOST: process.env.HOST || '127.0.0.1',
          DATABASE_URL: '',
          RECON_DATA_DIR: dataDir,
          PROVIDER_ENV: 'sandbox',
          PROVIDER_BASE_URL: sim.url,
          PROVIDER_API_KEY: sim.apiKeys.sandbox,
          WEBHOOK_SECRET: '',
          POLL_SCHEDULE: '*/5 * * * * *',
          RECONCILE_SCHEDULE: '*/5 * * * * *',
          WEBHOOK_GRACE_SECONDS: String(graceSeconds),
          PAYOUT_SOURCE_IBANS: sim.bank.sandbox.providerIban,
          PAYOUT_REFERENCE_PATTERN: '^PO[0-9]{16}$',
          OPERATOR_TOKEN: operatorToken,
          // The simulated provider deducts by its default contract: the daemon judges deductions by it.
          CONTRACT_TERMS: JSON.stringify(DEFAULT_CONTRACT_TERMS),
        });
        daemon = await startDaemon(config, log, shutdown);
      } catch (error) {
        await sim.stop();
        throw error;
      }
      shutdown.register('simulator', () => sim.stop());

      for (const topic of SUBSCRIPTION_TOPICS) await daemon.provider?.registerWebhook(topic, `${daemon.url}/webhooks`);
      sim.play();

      const auth = `-H 'Authorization: Bearer ${operatorToken}'`;
      let settled = false;
      // A difference the ground truth cannot explain, in the final summary: the demo exits 1.
      let defect = false;
      const summary = async () => demoSummary(daemon.ctx.database, sim, await badSignatureCount(daemon.ctx.metrics.webhooks.deliveries), graceSeconds, daemon.ctx.config.PAYOUT_SETTLEMENT_DAYS, dataDir, settled);
      out.write(`
  bnpl-recon demo is running: a simulated merchant business (seed ${sim.seed}) with faults injected.
  Simulated time runs ${timeScale}x real time (1 real second = ${formatSimulated(timeScale)}); times below are labelled real or simulated.

  Open in a browser:
    the accountants' page   ${daemon.url}/   (sign in with the operator token ${operatorToken})
    health / readiness      ${daemon.url}/healthz   ${daemon.url}/readyz
    metrics (Prometheus)    ${daemon.metricsUrl}

  With curl (each needs its header):
    discrepancies (JSON)    curl ${auth} '${daemon.url}/api/discrepancies'
    all, CSV                curl ${auth} '${daemon.url}/api/discrepancies?format=csv&status=all'
    payouts                 curl ${auth} '${daemon.url}/api/payouts?format=csv'
    acknowledge one         curl ${auth} -X POST -d '{"note":"checked with the provider"}' ${daemon.url}/api/discrepancies/ID/ack
    provider simulator      curl -H 'Api-Token: ${sim.apiKeys.sandbox}' '${sim.url}/api/v1/orders'

  From another terminal (finds this demo's ledger through RECON_DATA_DIR, no URL needed; after the
  demo ended too):
    RECON_DATA_DIR=${dataDir} npx bnpl-recon report discrepancies --status all
    RECON_DATA_DIR=${dataDir} npx bnpl-recon report orders
    RECON_DATA_DIR=${dataDir} npx bnpl-recon report invoices --ageing

  Not for a browser: the webhook receiver, POST ${daemon.url}/webhooks (the simulator delivers there, signed).

  Every 10 s: what was found against what the simulator injected, per kind. Discrepancies appear after
  the ${graceSeconds}-second grace period. Ctrl-C stops.

  `);
      const ticker = setInterval(() => void summary().then(({ text }) => out.write(`${text}\n`)).catch(() => undefined), 10_000);
      daemon.ctx.shutdown.register('demo ticker', () => clearInterval(ticker));
      // The merchant's bank statement and the provider's payout reports so far, imported every 20 s as
      // an accountant would, so the payout and invoice-to-cash kinds show too. (payout_not_on_statement
      // and invoice_not_paid_out need days of real time: not in a demo; state_mismatch is never injected.)
      const statementDir = await mkdtemp(path.join(tmpdir(), 'bnpl-demo-statements-'));
      const importStatements = async (last = false) => {
        const files = await sim.writeStatements(statementDir);
        const camt = files.find((f) => path.basename(f).startsWith('sandbox') && f.endsWith('.xml'));
        if (camt) await importStatementFile(daemon.ctx.database, 'sandbox', camt);
        // A report already imported is recognised by its bytes and adds nothing; one whose payout
        // webhook has not arrived yet is refused now and imported on a later round.
        const reports = await sim.writePayoutReports(statementDir, { format: 'csv' });
        for (const file of reports.filter((f) => path.basename(f).startsWith('sandbox-'))) {
          try {
            await importPayoutReportFile(daemon.ctx.database, 'sandbox', file, { columns: daemon.ctx.config.PAYOUT_REPORT_COLUMNS, maxFileBytes: daemon.ctx.config.PAYOUT_REPORT_MAX_FILE_BYTES, timeoutSeconds: daemon.ctx.config.PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS });
          } catch (error) {
            if (!isRefusal(error)) throw error;
            // Refused now, maybe imported on a later round (its payout webhook not here yet); in the
            // last round a refusal is final and said.
            if (last) log.warn({ file: path.basename(file), reason: (error as Error).message }, 'demo: payout report refused in the last import round');
            else log.debug({ file: path.basename(file), reason: (error as Error).message }, 'demo: payout report refused for now');
          }
        }
      };
      let importing: Promise<void> | undefined;
      const statements = setInterval(() => {
        if (importing || daemon.ctx.shutdown.isShuttingDown) return;
        importing = importStatements()
          .catch((error: unknown) => log.warn({ err: error }, 'demo statement import failed'))
          .finally(() => {
            importing = undefined;
          });
      }, 20_000);
      daemon.ctx.shutdown.register('demo statements', async () => {
        clearInterval(statements);
        // An import still reading the directory would fail on a missing file: let it finish first.
        await importing;
        await rm(statementDir, { recursive: true, force: true });
      });
      // A poll queued behind the scheduled one in flight, which may have fetched its pages before the
      // last transitions: a skipped tick here left a silent order's last state first seen by a poll
      // inside the grace period, and the final summary called its missed webhook unexplained (CI).
      // A failed poll (the provider's API refused it) is tried again: settling needs a complete one.
      const completePoll = async () => {
        for (let attempt = 1; ; attempt++) {
          const summary = await daemon.pollNow();
          if (summary?.status === 'complete') return;
          if (attempt === 3) throw new Error(`no complete poll in ${attempt} tries (last: ${summary ? `${summary.status}, ${summary.error ?? 'no error'}` : 'skipped'})`);
        }
      };
      // The settling phase of `--duration`: no new faults, every delivery in flight delivered or given
      // up, a poll, then a grace period so a pass may judge the last of them and the states that poll
      // saw, then the statement and payout reports, a poll and a pass. After it, a found count
      // differs from the injected one only where the ground truth says why (demo-summary.ts).
      // Bounded: the provider gives up after its last retry.
      const settle = async () => {
        sim.pause();
        // A reordered delivery is held until its order's next transition, days of simulated time
        // away: the drain jumps the simulator's clock to each next delivery instead of waiting for it.
        // The daemon judges lateness by real time, so this moves no finding either way.
        await sim.drain();
        // A poll before the grace period: an order that reached its last state just before the pause
        // or in the drain is seen a grace period before the last pass, which can then call its
        // webhook missed.
        await completePoll();
        await delay((graceSeconds + 1) * 1000, undefined, { ref: false });
        await importing;
        // Tried again as the poll is: a ledger that stalled may have left the pool reconnecting
        // (CONNECT_TIMEOUT), and an import of what was imported already adds nothing.
        for (let attempt = 1; ; attempt++) {
          try {
            await importStatements(true);
            break;
          } catch (error) {
            if (attempt === 3) throw error;
            log.warn({ err: error, attempt }, 'demo: the last statement and payout report import failed; trying again');
            await delay(2000, undefined, { ref: false });
          }
        }
        await completePoll();
        await daemon.reconcileNow();
      };
      // Registered last, so it runs first when the drain starts (on Ctrl-C too): the last word before
      // the ledger closes is what was found against what was injected.
      daemon.ctx.shutdown.register('demo final summary', async () => {
        clearInterval(ticker);
        await summary().then(
          (final) => {
            out.write(`\nfinal: ${final.text}\n`);
            defect ||= final.defect;
          },
          (error: unknown) => {
            defect = true;
            log.error({ err: error }, 'the demo could not make its final summary');
          },
        );
      });
      const stopped = shutdown.stopping();
      let unsettled = false;
      if (duration !== undefined) {
        const ended = await Promise.race([stopped.then(() => 'stopped' as const), delay(duration * 1000, undefined, { ref: false }).then(() => 'ended' as const)]);
        if (ended === 'ended') {
          clearInterval(ticker);
          clearInterval(statements);
          out.write(`\n  settling: the simulator stops injecting; waiting for its retries and held-back deliveries, a poll, the ${graceSeconds} s grace period, then a last import, poll and pass\n`);
          // Ctrl-C while settling stops at once (the final summary then says what was found so far).
          const settling = settle().then(
            () => true,
            (error: unknown) => {
              log.error({ err: error }, 'the demo could not settle: its final summary is of what was found so far');
              unsettled = true;
              return false;
            },
          );
          settled = await Promise.race([stopped.then(() => false), settling]);
        }
      } else await stopped;
      clearInterval(ticker);
      await daemon.stop('demo stopping');
      // Exit 1 (CONTRACT.md: any failure) when the final summary names a difference it calls a
      // defect (a delivery lost, refused or wrongly signed-off; a finding the ground truth does not
      // explain), when it could not be made, or when `--duration`'s settling failed: a CI job
      // running `demo --duration 60` must be able to tell.
      return defect || unsettled ? 1 : 0;
    });
  },
};
