/** Report output formats (CONTRACT.md: `--format csv|json`, csv by default). */
export const REPORT_FORMATS = ['csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** The Content-Type an HTTP response carrying a report should declare. */
export function contentTypeFor(format: ReportFormat): string {
  return format === 'csv' ? 'text/csv; charset=utf-8; header=present' : 'application/json; charset=utf-8';
}

export type Cell = string | number | null | undefined;

/**
 * One RFC 4180 field: quoted when it holds a comma, a double quote, CR or LF, with inner quotes
 * doubled; null and undefined are empty fields. Values are written as they are (no spreadsheet
 * formula escaping), because the report is for machines as much as people and must round-trip.
 */
export function csvField(value: Cell): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated as RFC 4180 asks. */
export function csvRecord(values: readonly Cell[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/**
 * Renders a batch of rows. JSON is one array written in pieces: '[' before the first batch, ',' between
 * objects, ']' at the end (see ReportWriter), so a million rows never exist as one string.
 */
export function renderBatch(format: ReportFormat, columns: readonly string[], rows: readonly Record<string, Cell>[], first: boolean): string {
  if (format === 'csv') {
    let out = '';
    for (const row of rows) out += csvRecord(columns.map((c) => row[c]));
    return out;
  }
  let out = '';
  rows.forEach((row, i) => {
    const ordered: Record<string, Cell> = {};
    for (const c of columns) ordered[c] = row[c] ?? null;
    out += `${first && i === 0 ? '\n' : ',\n'}${JSON.stringify(ordered)}`;
  });
  return out;
}
