import type { Command } from '../cli.js';

// Placeholder until the capability lands; see the open issues.
export const command: Command = {
  summary: 'statement (not built yet)',
  help: 'Usage: bnpl-recon statement (not built yet)',
  async run() {
    process.stderr.write('bnpl-recon statement: not built yet\n');
    return 1;
  },
};
