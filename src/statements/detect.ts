import { camt053Reader } from './camt053.js';
import { collect } from './collect.js';
import { csvReader, looksLikeCsv, type CsvOptions } from './csv.js';
import { decodeStatement } from './decode.js';
import { mt940Reader } from './mt940.js';
import { StatementFormatError, type ParsedStatement, type ReaderOptions, type SectionSink, type StatementFormat, type StatementReader } from './types.js';

/**
 * The format from the content, never the file name (inbox files arrive as "export(3).txt"):
 *  - camt053: XML whose root holds BkToCstmrStmt (camt.052/054 are reports and notifications, not
 *    statements, and are refused, saying so);
 *  - mt940: SWIFT fields, a :20: or :25: and a :60x: or :61: line, wherever they start (banks put
 *    header lines, a SWIFT envelope, SOH or '-' before the first field: mt940-blocks.ts);
 *  - csv: a table (a header row some bank profile knows, the first row of a profile without
 *    header, or rows of three or more cells, which the CSV reader refuses naming their columns).
 */
export function detectFormat(text: string): StatementFormat | null {
  const head = text.replace(/^\uFEFF/, '').trimStart();
  if (head.startsWith('<')) return /<(\w+:)?BkToCstmrStmt[\s>]/.test(text) ? 'camt053' : null;
  if (/^(\{4:)?:(20|25):/m.test(text) && /^:6[01][FM]?:/m.test(text)) return 'mt940';
  if (looksLikeCsv(head.slice(0, HEAD_CHARS))) return 'csv';
  return null;
}

/** How much of a file's start decides its format (a bank's preamble included). */
export const HEAD_CHARS = 64 * 1024;

const BINARY = 'binary content: not a bank statement';

/**
 * The reader for a file whose text starts with `head` (at least HEAD_CHARS of it, or all). A NUL
 * anywhere in the text refuses the file, not only in its head: Postgres text cannot hold one
 * (invalid byte sequence for encoding "UTF8": 0x00), and a field holding it would fail the import
 * with a database error instead of the file's.
 */
export function statementReader(head: string, emit: SectionSink, options: DetectOptions = {}): StatementReader {
  refuseBinary(head);
  const reader = formatReader(head, emit, options);
  return {
    format: reader.format,
    write(text) {
      refuseBinary(text);
      reader.write(text);
    },
    end: () => reader.end(),
  };
}

/** Throws on text holding a NUL (statementReader's header says why). */
export function refuseBinary(text: string): void {
  if (text.includes('\u0000')) throw new StatementFormatError(BINARY);
}

/**
 * What a reader needs besides the text: the balance rule (types.ts ReaderOptions), the CSV profiles
 * and account currencies (csv.ts); `whole`: `head` is the whole file.
 */
export interface DetectOptions extends ReaderOptions {
  csv?: CsvOptions;
  whole?: boolean;
}

function formatReader(head: string, emit: SectionSink, options: DetectOptions): StatementReader {
  // Any XML goes to the camt.053 reader, which says why a document is not a statement it can import.
  if (head.replace(/^\uFEFF/, '').trimStart().startsWith('<')) return camt053Reader(emit, options);
  switch (detectFormat(head)) {
    case 'mt940':
      return mt940Reader(emit, options);
    case 'csv':
      return csvReader(emit, head, options.whole ?? false, options.csv);
    default:
      // An empty file (a download that failed, a copy cut off at its start) says so, not "unknown format".
      if (options.whole && head.replace(/^\uFEFF/, '').trim() === '') throw new StatementFormatError(head === '' ? 'the file is empty' : 'the file holds only blank space');
      throw new StatementFormatError('unknown format: neither CAMT.053 XML, MT940 nor a CSV with booking date and amount columns');
  }
}

/** Decodes (decode.ts), detects and parses one whole file. */
export function parseStatement(bytes: Buffer | string, options: Omit<DetectOptions, 'whole'> = {}): ParsedStatement {
  const text = decodeStatement(bytes);
  return collect((emit) => statementReader(text.slice(0, HEAD_CHARS), emit, { ...options, whole: text.length <= HEAD_CHARS }), text);
}
