import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { withContext, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { acknowledgeDiscrepancy } from '../reconcile/ack.js';

const HELP = `Usage: bnpl-recon discrepancy ack ID --note TEXT [--by NAME]

Marks discrepancy ID (the report's id column) of PROVIDER_ENV acknowledged by a person, with the note. The history
records 'operator:NAME' (NAME defaults to the login name). The reconciler will not reopen it unless
its evidence changes; it still resolves it when the evidence goes away. Prints the result as JSON.
Exit 1 when the id is unknown in PROVIDER_ENV or the discrepancy is already resolved.`;

export const command: Command = {
  summary: 'acknowledge a discrepancy with a note',
  help: HELP,
  async run(argv) {
    const [action, ...rest] = argv;
    if (action !== 'ack') throw new UsageError(`discrepancy needs 'ack'${action ? `, not '${action}'` : ''}`);
    const { values, positionals } = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: true,
      options: { note: { type: 'string' }, by: { type: 'string' } },
    });
    if (positionals.length !== 1) throw new UsageError('discrepancy ack takes exactly one ID');
    const idText = positionals[0]!;
    // Beyond 2^53 Number() rounds: 9007199254740993 would acknowledge discrepancy 9007199254740992.
    if (!/^[1-9]\d{0,15}$/.test(idText) || !Number.isSafeInteger(Number(idText))) {
      throw new UsageError(`ID must be a positive integer up to ${Number.MAX_SAFE_INTEGER}, not '${idText}'`);
    }
    const note = values.note?.trim();
    if (!note) throw new UsageError('--note TEXT is required');
    const by = values.by?.trim() || safeUserName();
    return withContext('discrepancy ack', { access: 'reader' }, async (ctx) => {
      // The environment's own, as the operator API's acknowledgement and `report` are: two daemons
      // may share one ledger, and an id of the other's is not this one's to acknowledge.
      const result = await acknowledgeDiscrepancy(ctx.database, Number(idText), note, by, ctx.config.PROVIDER_ENV);
      if (result.outcome === 'not_found') {
        process.stderr.write(`bnpl-recon discrepancy: no discrepancy with id ${idText} in PROVIDER_ENV ${ctx.config.PROVIDER_ENV}\n`);
        return 1;
      }
      if (result.outcome === 'resolved') {
        process.stderr.write(`bnpl-recon discrepancy: discrepancy ${idText} is already resolved\n`);
        return 1;
      }
      process.stdout.write(`${JSON.stringify(result.discrepancy)}\n`);
      return 0;
    });
  },
};

function safeUserName(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return process.env.USER ?? 'unknown';
  }
}
