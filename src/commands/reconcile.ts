import type { Command } from '../cli.js';

// Placeholder until the capability lands; see the open issues.
export const command: Command = {
  summary: 'reconcile (not built yet)',
  help: 'Usage: bnpl-recon reconcile (not built yet)',
  async run() {
    process.stderr.write('bnpl-recon reconcile: not built yet\n');
    return 1;
  },
};
