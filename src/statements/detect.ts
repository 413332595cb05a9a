import { parseCamt053 } from './camt053.js';
import { csvHeader, parseCsv } from './csv.js';
import { parseMt940 } from './mt940.js';
import { StatementFormatError, type ParsedStatement, type StatementFormat } from './types.js';

/**
 * The format from the content, never the file name (inbox files arrive as "export(3).txt"):
 *  - camt053: XML whose root holds BkToCstmrStmt (camt.052/054 are reports and notifications, not
 *    statements, and are refused);
 *  - mt940: SWIFT fields, a :20: and a :60x: or :61: line, optionally in a {1:…}{4: envelope;
 *  - csv: a row naming a booking date and an amount column (csv.ts lists the accepted names).
 */
export function detectFormat(text: string): StatementFormat | null {
  const head = text.replace(/^\uFEFF/, '').trimStart();
  if (head.startsWith('<')) return /<(\w+:)?BkToCstmrStmt[\s>]/.test(text) ? 'camt053' : null;
  if (/^(\{1:|:20:)/.test(head) && /^:6[01][FMC]?:/m.test(text)) return 'mt940';
  const lines = head.split(/\r?\n/, 50);
  if (lines.some((l) => l.trim() !== '' && csvHeader(l) !== null)) return 'csv';
  return null;
}

/** Decodes (UTF-8, BOM tolerated), detects and parses one file's bytes. */
export function parseStatement(bytes: Buffer | string): ParsedStatement {
  const text = typeof bytes === 'string' ? bytes : bytes.toString('utf8');
  if (text.includes('\u0000')) throw new StatementFormatError('binary content: not a bank statement');
  const format = detectFormat(text);
  switch (format) {
    case 'camt053':
      return parseCamt053(text);
    case 'mt940':
      return parseMt940(text);
    case 'csv':
      return parseCsv(text);
    default:
      throw new StatementFormatError('unknown format: neither CAMT.053 XML, MT940 nor a CSV with booking date and amount columns');
  }
}
