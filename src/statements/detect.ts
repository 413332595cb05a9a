import { parseCamt053 } from './camt053.js';
import { csvHeader, parseCsv } from './csv.js';
import { decodeStatement } from './decode.js';
import { parseMt940 } from './mt940.js';
import { StatementFormatError, type ParsedStatement, type StatementFormat } from './types.js';

/**
 * The format from the content, never the file name (inbox files arrive as "export(3).txt"):
 *  - camt053: XML whose root holds BkToCstmrStmt (camt.052/054 are reports and notifications, not
 *    statements, and are refused, saying so);
 *  - mt940: SWIFT fields, a :20: or :25: and a :60x: or :61: line, wherever they start (banks put
 *    header lines, a SWIFT envelope, SOH or '-' before the first field: mt940-blocks.ts);
 *  - csv: a row naming a booking date and an amount column (csv.ts lists the accepted names).
 */
export function detectFormat(text: string): StatementFormat | null {
  const head = text.replace(/^\uFEFF/, '').trimStart();
  if (head.startsWith('<')) return /<(\w+:)?BkToCstmrStmt[\s>]/.test(text) ? 'camt053' : null;
  if (/^(\{4:)?:(20|25):/m.test(text) && /^:6[01][FM]?:/m.test(text)) return 'mt940';
  const lines = head.split(/\r?\n/, 50);
  if (lines.some((l) => l.trim() !== '' && csvHeader(l) !== null)) return 'csv';
  return null;
}

/** Decodes (encoding: decode.ts), detects and parses one file's bytes. */
export function parseStatement(bytes: Buffer | string): ParsedStatement {
  const text = decodeStatement(bytes);
  if (text.includes('\u0000')) throw new StatementFormatError('binary content: not a bank statement');
  // Any XML goes to the camt.053 reader, which says why a document is not a statement it can import.
  if (text.trimStart().startsWith('<')) return parseCamt053(text);
  switch (detectFormat(text)) {
    case 'mt940':
      return parseMt940(text);
    case 'csv':
      return parseCsv(text);
    default:
      throw new StatementFormatError('unknown format: neither CAMT.053 XML, MT940 nor a CSV with booking date and amount columns');
  }
}
