import { Counter, type Registry } from 'prom-client';
import { METRIC_PREFIX } from '../metrics/registry.js';

/** What became of a file in the statement inbox. */
export const INBOX_OUTCOMES = ['imported', 'already_imported', 'failed', 'deferred'] as const;
export type InboxOutcome = (typeof INBOX_OUTCOMES)[number];

export interface StatementMetrics {
  inboxFiles: Counter<'outcome'>;
  linesImported: Counter;
}

export function createStatementMetrics(registry: Registry): StatementMetrics {
  const inboxFiles = new Counter({
    name: `${METRIC_PREFIX}statement_inbox_files_total`,
    help: 'Files taken from the statement inbox, by outcome (deferred: still being written, changed while read, or the database was down)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of INBOX_OUTCOMES) inboxFiles.inc({ outcome }, 0);
  const linesImported = new Counter({
    name: `${METRIC_PREFIX}statement_lines_imported_total`,
    help: 'Statement lines the inbox stored that no earlier statement had brought',
    registers: [registry],
  });
  return { inboxFiles, linesImported };
}
