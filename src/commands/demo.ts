import type { Command } from '../cli.js';

// Placeholder until the capability lands; see the open issues.
export const command: Command = {
  summary: 'demo (not built yet)',
  help: 'Usage: bnpl-recon demo (not built yet)',
  async run() {
    process.stderr.write('bnpl-recon demo: not built yet\n');
    return 1;
  },
};
