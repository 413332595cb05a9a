#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { exitWithStatusOnSignal } from './lifecycle/shutdown.js';
import { ConfigError } from './config/load.js';
import { UsageError } from './config/usage-error.js';
import { buildInfo } from './package/version.js';

import type { Command } from './commands/command.js';
import { printable } from './log/printable.js';

const COMMANDS: Record<string, () => Promise<{ command: Command }>> = {
  start: () => import('./commands/start.js'),
  demo: () => import('./commands/demo.js'),
  migrate: () => import('./commands/migrate.js'),
  poll: () => import('./commands/poll.js'),
  reconcile: () => import('./commands/reconcile.js'),
  statement: () => import('./commands/statement.js'),
  'payout-report': () => import('./commands/payout-report.js'),
  report: () => import('./commands/report.js'),
  discrepancy: () => import('./commands/discrepancy.js'),
  webhooks: () => import('./commands/webhooks.js'),
  ledger: () => import('./commands/ledger.js'),
  sim: () => import('./commands/sim.js'),
};

const USAGE = `Usage: bnpl-recon <command> [options]

Commands:
  start                      run the daemon until SIGTERM/SIGINT
  demo                       the daemon on embedded Postgres against the bundled simulator, faults on
  migrate                    apply pending migrations and exit
  poll                       one full poll of the provider's orders, then exit
  reconcile                  one reconciliation pass, then exit
  statement import FILE...   import bank statements (CAMT.053, MT940, CSV)
  payout-report import FILE...  import the provider's payout reports (CSV, XLSX)
  report discrepancies|orders|payouts|invoices|deliveries
  ledger reparse             re-classify stored deliveries with this release's parser
  discrepancy ack ID --note TEXT
  webhooks register|keys
  sim                        run the provider simulator alone
  --version                  print the version

Run 'bnpl-recon <command> --help' for a command's options. Settings come from environment variables (see README).`;

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    const info = buildInfo();
    process.stdout.write(`bnpl-recon ${info.version} (commit ${info.commit})\n`);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`bnpl-recon: unknown command '${name}'\n\n${USAGE}\n`);
    return 2;
  }
  let command: Command;
  try {
    command = (await load()).command;
  } catch (error) {
    process.stderr.write(`bnpl-recon: command '${name}' is not available in this build: ${(error as Error).message}\n`);
    return 1;
  }
  if (asksForHelp(rest)) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    // After a flag, a command that parses its options by hand calls a help flag unknown
    // (`statement import --accept-unbalanced --help`): it is in option position, so it asks for help.
    if (error instanceof UsageError && /unknown option '(-h|--help)'/i.test(error.message)) {
      process.stdout.write(`${command.help}\n`);
      return 0;
    }
    if (error instanceof ConfigError || error instanceof UsageError) {
      process.stderr.write(`bnpl-recon ${name}: ${error.message}\n`);
      return 2;
    }
    // `sim --no-wait --help`: after an option asksForHelp cannot tell from one taking a value, the
    // command's own parser decides; an option it does not know is a help flag in option position.
    if (error instanceof TypeError && (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && /^Unknown option '(-h|--help)'/.test(error.message)) {
      process.stdout.write(`${command.help}\n`);
      return 0;
    }
    if (error instanceof TypeError && (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`bnpl-recon ${name}: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`bnpl-recon ${name}: ${printable((error as Error).message ?? String(error), '\n\t')}\n`);
    return 1;
  }
}

const HELP_FLAGS = new Set(['-h', '--help']);
/** `--note` or `-n`: an option that may take the next argument as its value. */
const BARE_OPTION = /^(-[^-]|--[^=]+)$/;

/**
 * -h/--help in option position: first, or after a positional or an option with its value inline.
 * After a bare option it may be that option's value (`discrepancy ack 1 --note -h` acknowledges
 * nothing and prints help otherwise, exit 0): the command's parser then decides, refusing
 * `--note -h` as ambiguous (exit 2), or, after a flag, naming --help an unknown option (help, in
 * main). After `--` everything is a positional.
 */
export function asksForHelp(args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '--') return false;
    if (HELP_FLAGS.has(arg) && (i === 0 || !BARE_OPTION.test(args[i - 1]!))) return true;
  }
  return false;
}

/**
 * The process's whole run of a command, as bin/bnpl-recon.js and this file run as a script do:
 * `main`, its status as the process's exit code (1 for an error that escaped it), and once it
 * returned (its drain done, its signal handlers gone; closing sockets and flushing logs is left) a
 * signal ends the process with that status.
 */
export async function runAsProcess(argv: string[]): Promise<void> {
  try {
    process.exitCode = await main(argv);
  } catch (error) {
    process.stderr.write(`bnpl-recon: ${String(error)}\n`);
    process.exitCode = 1;
  } finally {
    exitWithStatusOnSignal();
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(realpathSync(entry)).href) {
  void runAsProcess(process.argv.slice(2));
}
