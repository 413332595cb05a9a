import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { withProcess, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { configSchema } from '../config/schema.js';
import { DEFAULT_FAULT_RATES, NO_FAULTS, businessSchema, loadScenario, validateFaults, type FaultRates } from '../../sim/options.js';
import { startSimulator } from '../../sim/simulator.js';
import { parseContractTerms, type ContractTermsInput } from '../../sim/contract.js';
import { parseDuration, SECOND_MS } from '../../sim/time.js';

const FAULT_NAMES = Object.keys(NO_FAULTS);
const LOG_LEVELS: readonly string[] = configSchema.shape.LOG_LEVEL.unwrap().options;
const camel = (name: string) => name.replace(/[-_](\w)/g, (_, c: string) => c.toUpperCase());

const HELP = `Usage: bnpl-recon sim [options]

Runs the provider simulator alone: GET /api/v1/orders, POST /webhooks, GET /webhooks/keys (also under
/api/v1), signed deliveries with retries, the 500 requests/s limit, and a seeded merchant business
with injected faults. The business starts when the first webhook registration arrives (or at once
with --no-wait). Every 30 s and on SIGTERM/SIGINT it writes ground-truth.json, the bank
statements (CAMT.053, CSV, MT940) and a payout report per completed payout (CSV and XLSX) to --out.

Options:
  --port N                 listen port (default 8090; 0 picks a free one)
  --host ADDR              listen address (default 127.0.0.1)
  --seed S                 seed of the business and the faults (default 1)
  --time-scale X           simulated ms per real ms (default 60: a simulated hour per real minute)
  --start-time ISO         simulated start (default 2026-01-05T00:00:00Z)
  --duration D             stop the business after D of simulated time, e.g. 7d (deliveries go on)
  --scenario FILE          JSON scenario: {seed, timeScale, startTime, duration, graceSeconds, faults, business,
                           contractTerms}
  --contract-terms T       the contract the provider deducts by, CONTRACT_TERMS' shape: a JSON file or inline
                           JSON starting with { (default: the simulator README's example)
  --faults default|none    the preset the rates start from (default: none with a scenario's
                           faults, else default)
  --fault NAME=RATE        set one rate, repeatable; names: ${FAULT_NAMES.join(', ')}
  --orders-per-day N       business volume (default 48)
  --grace-seconds N        the receiver's grace period in simulated seconds (default 3600)
  --retry-base-seconds N   first retry delay in simulated seconds, doubling (default 60)
  --signature-header NAME  default x-service-signature
  --out DIR                where ground truth, statements and payout reports go (default ./sim-out)
  --no-wait                start the business without waiting for a registration
  --log-level LEVEL        default info (logs go to stderr)`;

export const command: Command = {
  summary: 'run the provider simulator alone',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string', default: '8090' },
        host: { type: 'string', default: '127.0.0.1' },
        seed: { type: 'string' },
        'time-scale': { type: 'string' },
        'start-time': { type: 'string' },
        duration: { type: 'string' },
        scenario: { type: 'string' },
        'contract-terms': { type: 'string' },
        faults: { type: 'string' },
        fault: { type: 'string', multiple: true, default: [] },
        'orders-per-day': { type: 'string' },
        'grace-seconds': { type: 'string' },
        'retry-base-seconds': { type: 'string' },
        'signature-header': { type: 'string' },
        out: { type: 'string', default: './sim-out' },
        'no-wait': { type: 'boolean', default: false },
        'log-level': { type: 'string', default: 'info' },
      },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const scenario = values.scenario ? await loadScenario(values.scenario).catch((e: Error) => Promise.reject(new UsageError(e.message))) : undefined;

    // A scenario's faults are its whole fault set; without one the default rates apply.
    const preset = values.faults ?? (scenario?.faults ? 'none' : 'default');
    if (preset !== 'default' && preset !== 'none') throw new UsageError('--faults must be default or none');
    const rates: Record<string, number> = { ...(preset === 'none' ? NO_FAULTS : DEFAULT_FAULT_RATES), ...(scenario?.faults ?? {}) };
    for (const item of values.fault) {
      const match = /^([\w-]+)=(\d*\.?\d+)$/.exec(item);
      if (!match) throw new UsageError(`--fault expects NAME=RATE, got '${item}'`);
      const name = camel(match[1] ?? '');
      if (!FAULT_NAMES.includes(name)) throw new UsageError(`--fault: unknown fault '${match[1]}' (known: ${FAULT_NAMES.join(', ')})`);
      rates[name] = Number(match[2]);
    }
    let faults: FaultRates;
    try {
      faults = validateFaults(rates);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const business = { ...(scenario?.business ?? {}) } as Record<string, number>;
    if (values['orders-per-day'] !== undefined) business.ordersPerDay = number(values['orders-per-day'], '--orders-per-day');
    const parsedBusiness = businessSchema.partial().safeParse(business);
    if (!parsedBusiness.success) throw new UsageError(`business: ${parsedBusiness.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);

    const contractTerms = values['contract-terms'] !== undefined ? await readTerms(values['contract-terms']) : (scenario?.contractTerms as ContractTermsInput | undefined);
    if (contractTerms !== undefined) {
      try {
        parseContractTerms(contractTerms);
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
    }

    const durationText = values.duration ?? scenario?.duration;
    const durationMs = durationText === undefined ? undefined : parseDuration(durationText);
    if (durationText !== undefined && durationMs === undefined) throw new UsageError('--duration expects e.g. 90s, 6h, 7d');
    const graceSeconds = values['grace-seconds'] !== undefined ? number(values['grace-seconds'], '--grace-seconds') : scenario?.graceSeconds;
    // Checked here, not left to the simulator or the logger: their refusals are plain errors (exit 1,
    // as for a failure at run time) naming their own option names (timeScale, LOG_LEVEL), not the flag.
    const port = portNumber(values.port);
    const timeScale = values['time-scale'] !== undefined ? number(values['time-scale'], '--time-scale') : (scenario?.timeScale ?? 60);
    if (!(timeScale > 0)) throw new UsageError(`--time-scale expects a positive number, got '${values['time-scale']}'`);
    const startTime = values['start-time'] ?? scenario?.startTime;
    if (values['start-time'] !== undefined && Number.isNaN(Date.parse(values['start-time']))) {
      throw new UsageError(`--start-time expects an ISO 8601 time such as 2026-01-05T00:00:00Z, got '${values['start-time']}'`);
    }
    const retryBaseSeconds = values['retry-base-seconds'] !== undefined ? number(values['retry-base-seconds'], '--retry-base-seconds') : undefined;
    if (!LOG_LEVELS.includes(values['log-level'])) throw new UsageError(`--log-level expects one of ${LOG_LEVELS.join(', ')}, got '${values['log-level']}'`);

    return withProcess('sim', { service: true, overrides: { LOG_LEVEL: values['log-level'] } }, async ({ log, shutdown }) => {
      const sim = await startSimulator({
        seed: values.seed ?? scenario?.seed ?? 1,
        port,
        host: values.host,
        timeScale,
        ...(startTime ? { startTime } : {}),
        faults,
        business: parsedBusiness.data,
        ...(contractTerms !== undefined ? { contractTerms } : {}),
        ...(graceSeconds !== undefined ? { graceMs: graceSeconds * SECOND_MS } : {}),
        ...(retryBaseSeconds !== undefined ? { retryBaseMs: retryBaseSeconds * SECOND_MS } : {}),
        ...(values['signature-header'] ? { signatureHeader: values['signature-header'] } : {}),
        log,
      });
      const out = path.resolve(values.out);
      const truthFile = path.join(out, 'ground-truth.json');
      const writeOut = async () => {
        await sim.writeGroundTruth(truthFile);
        await sim.writeStatements(out);
        await sim.writePayoutReports(out);
      };
      shutdown.register('simulator', async () => {
        await writeOut().catch((error: unknown) => log.error({ err: error }, 'writing ground truth failed'));
        await sim.stop();
      });

      process.stdout.write(
        [
          `simulator listening on ${sim.url}`,
          `  sandbox    Api-Token: ${sim.apiKeys.sandbox}   (provider IBAN ${sim.bank.sandbox.providerIban})`,
          `  production Api-Token: ${sim.apiKeys.production}   (provider IBAN ${sim.bank.production.providerIban})`,
          `  register:  curl -X POST ${sim.url}/webhooks -H 'Api-Token: ${sim.apiKeys.sandbox}' -H 'Content-Type: application/json' -d '{"topic":"order","address":"http://127.0.0.1:8080/webhooks"}'`,
          `  ground truth: ${truthFile}`,
          `  statements:   ${out}/<env>-statement.{camt053.xml,csv,mt940}`,
          `  payout reports: ${out}/<env>-payout-<sepa_instruction_id>.{csv,xlsx}`,
          values['no-wait'] ? '  business running' : '  business starts at the first webhook registration',
          '',
        ].join('\n'),
      );

      const timer = setInterval(() => void writeOut().catch((error: unknown) => log.warn({ err: error }, 'writing ground truth failed')), 30_000);
      timer.unref();
      shutdown.register('ground-truth timer', () => clearInterval(timer));
      if (!values['no-wait']) await Promise.race([sim.waitForRegistration(), shutdown.stopping()]);
      if (!shutdown.isShuttingDown) {
        log.info({ simTime: new Date(sim.now()).toISOString() }, 'business started');
        if (durationMs === undefined) sim.play();
        else void sim.runFor(durationMs).then(() => log.info('business duration reached; deliveries continue'));
      }
      await shutdown.stopping();
      return 0;
    });
  },
};

/** --contract-terms: inline JSON (starting with `{`) or a file holding it. */
async function readTerms(value: string): Promise<ContractTermsInput> {
  const text = value.trim().startsWith('{') ? value : await readFile(value, 'utf8').catch((e: Error) => Promise.reject(new UsageError(`--contract-terms: ${e.message}`)));
  try {
    return JSON.parse(text) as ContractTermsInput;
  } catch (error) {
    throw new UsageError(`--contract-terms: not JSON: ${(error as Error).message}`);
  }
}

/** A TCP port: 0 (any free one) to 65535; Node's listen() would throw a RangeError naming no flag. */
function portNumber(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isInteger(value) || value < 0 || value > 65535) throw new UsageError(`--port expects a whole number from 0 to 65535, got '${text}'`);
  return value;
}

function number(text: string, flag: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) throw new UsageError(`${flag} expects a non-negative number, got '${text}'`);
  return value;
}

