import type { Command } from '../cli.js';

// Placeholder until the capability lands; see the open issues.
export const command: Command = {
  summary: 'start (not built yet)',
  help: 'Usage: bnpl-recon start (not built yet)',
  async run() {
    process.stderr.write('bnpl-recon start: not built yet\n');
    return 1;
  },
};
