import type { ParsedStatement, SectionSink, StatementFormat, StatementLine, StatementReader, StatementSection } from './types.js';

/** The file-level view of a file's statements: its first account and the span of their periods. */
export function summarize(format: StatementFormat, sections: StatementSection[], lines: StatementLine[]): ParsedStatement {
  const from = sections.map((s) => s.periodFrom).filter((p): p is string => p !== null).sort()[0] ?? null;
  const to = sections.map((s) => s.periodTo).filter((p): p is string => p !== null).sort().at(-1) ?? null;
  return { format, accountIban: sections.find((s) => s.accountIban)?.accountIban ?? null, periodFrom: from, periodTo: to, sections, lines };
}

/** Runs a reader over a whole text and collects what it emits. */
export function collect(make: (emit: SectionSink) => StatementReader, text: string): ParsedStatement {
  const sections: StatementSection[] = [];
  const lines: StatementLine[] = [];
  const reader = make((section, sectionLines, more) => {
    if (!more) sections.push(section);
    for (const l of sectionLines) lines.push(l);
  });
  reader.write(text);
  reader.end();
  return summarize(reader.format, sections, lines);
}
