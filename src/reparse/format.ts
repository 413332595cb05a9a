import type { ReparseSummary } from './run.js';

/** The command's summary as text: a headline, then one line per (topic, status before, after, outcome). */
export function formatReparseSummary(environment: string, s: ReparseSummary): string {
  if (s.skipped) return `reparse ${environment}: skipped, another process holds the reparse lock\n`;
  const verb = s.dryRun ? 'would change' : 'changed';
  const lines = [
    `reparse ${environment} (parser version ${s.parserVersion})${s.dryRun ? ', dry run' : `, run ${s.runId}`}${s.aborted ? ', aborted' : ''}: ` +
      `${s.examined} examined, ${s.changed} ${verb}`,
  ];
  if (s.changes.length > 0) {
    const rows = [['topic', 'from', 'to', 'outcome', 'count'], ...s.changes.map((c) => [c.topic ?? '(none)', c.from, c.to, c.outcome, String(c.count)])];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const row of rows) lines.push(row.map((cell, i) => (i === row.length - 1 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  '));
  }
  return `${lines.join('\n')}\n`;
}
