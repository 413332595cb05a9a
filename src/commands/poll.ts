import type { Command } from '../cli.js';

// Placeholder until the capability lands; see the open issues.
export const command: Command = {
  summary: 'poll (not built yet)',
  help: 'Usage: bnpl-recon poll (not built yet)',
  async run() {
    process.stderr.write('bnpl-recon poll: not built yet\n');
    return 1;
  },
};
