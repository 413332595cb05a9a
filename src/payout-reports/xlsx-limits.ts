import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { readZipParts, storedZip, ZipRefusal, type ZipPart } from './xlsx-zip.js';

/*
 * PAYOUT_REPORT_MAX_FILE_BYTES counts an XLSX's compressed bytes, and XML compresses tenfold or
 * more: within 8 MiB a workbook holds 1,000,000 short rows (a 4.9 MB file of 49 MB of sheet XML
 * took read-excel-file 119 s in a 512 MB heap, the Kubernetes manifest's, and failed with "Maximum
 * call stack size exceeded"), and a sheet whose second row is numbered 30,000,000 (a 1.5 KB file)
 * makes it allocate every row between: the process died out of heap in 10 s. So a workbook is held
 * to what a payout report can be before read-excel-file reads it.
 *
 * The largest report the provider sends has 100,000 rows (settings.md, PAYOUT_REPORT_MAX_FILE_BYTES).
 * Written by write-excel-file with the 14 columns bnpl-recon reads, it is 46-51 MB of sheet XML and
 * 6-11 MB of shared strings (amounts as numbers or as text), 52-62 MB of XML in all, read whole in
 * 3.2-5.5 s at a peak RSS of 380-450 MB (Node 20, 512 MB heap, 2-core machine, 2026-12); with the
 * checks here in 7.0-7.8 s, of which saxes reading the sheet takes 2.0 s. The worst workbooks
 * within the limits measured: 149,999 full report rows (8.2 s, peak RSS 691 MB), 45,000 rows of 64
 * number cells in a 7.7 MB file (6.0 s, 738 MB), 150,000 rows with a value in column 64 (1.5 s,
 * 375 MB); each also read within a 384 MB heap.
 */

/** 1.5 times the largest report's rows. */
export const XLSX_MAX_ROWS = 150_000;
/**
 * A report has 14 columns (provider-merchant-docs.md) and some a portal or an accountant adds:
 * 64 leaves room for them. read-excel-file fills every row up to the rightmost column holding a
 * value, so rows and columns together bound its grid: 9.6 million cells.
 */
export const XLSX_MAX_COLUMNS = 64;
/**
 * Cells holding a value, each an object read-excel-file makes and grid.ts makes again: 150,000 rows
 * of 20 columns. The 128 MiB of XML below could hold 6 million (22 bytes a cell) if
 * PAYOUT_REPORT_MAX_FILE_BYTES were raised; 2.9 million read within a 384 MB heap.
 */
export const XLSX_MAX_CELLS = 3_000_000;
/**
 * The XML a workbook may inflate to, all parts together: 1.5 times the largest report's 62 MB, with
 * room for writers more verbose than write-excel-file (styles on every cell, inline strings).
 */
export const XLSX_MAX_XML_BYTES = 128 * 1024 * 1024;

/** The parts read-excel-file reads (its filterZipArchiveEntry): the rest are never inflated. */
const isXmlPart = (name: string) => name.endsWith('.xml') || name.endsWith('.xml.rels');

/** A workbook read-excel-file may read, and what it does not say about the first sheet's cells. */
export interface BoundedWorkbook {
  zip: Buffer;
  /**
   * References (`E12`) of the first sheet's number cells shown as a percentage (a number format
   * with `%`): the cell stores the fraction, 0.029 for 2.9 %, and read-excel-file gives the number
   * without its format.
   */
  percentCells: ReadonlySet<string>;
}

/**
 * The workbook as a ZIP that read-excel-file may read: its XML parts within XLSX_MAX_XML_BYTES
 * (counted while inflating, not taken from the archive's claims), stored uncompressed, and its
 * sheets within XLSX_MAX_ROWS, XLSX_MAX_COLUMNS and XLSX_MAX_CELLS; else why not, for the user.
 */
export async function boundedXlsx(bytes: Uint8Array): Promise<BoundedWorkbook | string> {
  let parts: ZipPart[];
  try {
    parts = readZipParts(
      bytes,
      isXmlPart,
      XLSX_MAX_XML_BYTES,
      `the workbook's XML is larger than ${XLSX_MAX_XML_BYTES / 1024 / 1024} MiB unzipped, more than a payout report of ${XLSX_MAX_ROWS.toLocaleString('en')} rows holds: split the report`,
    );
  } catch (error) {
    if (!(error instanceof ZipRefusal)) throw error;
    return error.overBudget ? error.message : `not a readable XLSX file: ${error.message}`;
  }
  // read-excel-file keeps the last copy of a name stored twice, these checks would see every copy.
  const repeated = parts.find((p, i) => parts.findIndex((q) => q.name === p.name) !== i);
  if (repeated) return `not a readable XLSX file: ${repeated.name} is stored twice in the archive`;
  let percentStyles: ReadonlySet<number>;
  let firstSheet: string | undefined;
  try {
    const named = workbookParts(parts);
    firstSheet = named.firstSheet;
    percentStyles = percentStylesOf(parts.find((p) => p.name === named.styles));
  } catch (error) {
    if (error instanceof Refused) return error.message;
    throw error;
  }
  const percentCells = new Set<string>();
  for (const part of parts) {
    // read-excel-file reads rows only inside a sheetData element; a part without the name has none.
    if (!part.data.includes('sheetData')) continue;
    const refusal = await sheetExtentRefusal(part, part.name === firstSheet ? { styles: percentStyles, cells: percentCells } : undefined);
    if (refusal !== undefined) return refusal;
  }
  return { zip: storedZip(parts), percentCells };
}

/**
 * The cell styles (indexes into styles.xml's cellXfs, a cell's `s`) whose number format shows a
 * percentage: the built-in 9 (`0%`) and 10 (`0.00%`), or a custom format (numFmts) whose section
 * for a positive value shows a `%` (ECMA-376 Part 1, 18.8.30-31).
 */
function percentStylesOf(styles: ZipPart | undefined): ReadonlySet<number> {
  const percent = new Set<number>();
  if (!styles) return percent;
  const formats = new Map<number, string>();
  const percentFormats = new Set([9, 10]);
  const formatId = (tag: SaxesTagPlain) => {
    const id = attribute(tag, 'numFmtId', styles.name) ?? '0';
    if (!/^\d{1,9}$/.test(id)) throw new Refused(`not a readable XLSX file: ${styles.name}: number format id '${id.slice(0, 20)}'`);
    return Number(id);
  };
  let within: 'numFmts' | 'cellXfs' | undefined;
  let index = 0;
  parseWhole(styles, {
    opentag: (tag) => {
      const name = localName(tag.name);
      if (name === 'numFmts' || name === 'cellXfs') {
        within = name;
      } else if (name === 'numFmt' && within === 'numFmts') {
        const code = attribute(tag, 'formatCode', styles.name);
        if (code !== undefined) formats.set(formatId(tag), code);
      } else if (name === 'xf' && within === 'cellXfs') {
        const id = formatId(tag);
        const code = formats.get(id);
        if (code !== undefined ? showsPercent(code) : percentFormats.has(id)) percent.add(index);
        index += 1;
      }
    },
    closetag: (tag) => {
      const name = localName(tag.name);
      if (name === within) within = undefined;
    },
  });
  return percent;
}

/**
 * Whether a number format shows a positive value as a percentage: its first section (the one a
 * positive value takes; `;` separates the sections) holds a `%` that is not in "quoted text", not
 * escaped (`\%`), not the character after `_` (a space as wide as it) or `*` (a fill), and not in
 * brackets (a [color], a [$-locale], a [condition]). A rate is never negative.
 */
function showsPercent(code: string): boolean {
  const literal = /"[^"]*"|[\\_*].|\[[^\]]*\]/g;
  const plain = code.replace(literal, (m) => (m.includes(';') ? ' '.repeat(m.length) : m.replace(/%/g, ' ')));
  return (plain.split(';')[0] ?? '').includes('%');
}

/**
 * The parts of the workbook's first sheet, which read-excel-file reads (the first <sheet> of
 * xl/workbook.xml with a name), and of its styles, each through its relationship in
 * xl/_rels/workbook.xml.rels (styles: xl/styles.xml when none names them). A sheet undefined when
 * the workbook does not say (read-excel-file then refuses it).
 */
function workbookParts(parts: readonly ZipPart[]): { firstSheet: string | undefined; styles: string } {
  const workbook = parts.find((p) => p.name === 'xl/workbook.xml');
  const rels = parts.find((p) => p.name === 'xl/_rels/workbook.xml.rels');
  if (!workbook || !rels) return { firstSheet: undefined, styles: 'xl/styles.xml' };
  let id: string | undefined;
  parseWhole(workbook, {
    opentag: (tag) => {
      if (id === undefined && localName(tag.name) === 'sheet' && attribute(tag, 'name', workbook.name) !== undefined) id = attribute(tag, 'id', workbook.name);
    },
  });
  let sheet: string | undefined;
  let styles: string | undefined;
  parseWhole(rels, {
    opentag: (tag) => {
      if (localName(tag.name) !== 'Relationship') return;
      const target = attribute(tag, 'Target', rels.name);
      if (sheet === undefined && id !== undefined && attribute(tag, 'Id', rels.name) === id) sheet = target;
      if (styles === undefined && attribute(tag, 'Type', rels.name)?.endsWith('/styles')) styles = target;
    },
  });
  // A target is relative to xl/, or absolute from the package's root; taken as written, as read-excel-file takes it.
  const partName = (target: string) => (target.startsWith('/') ? target.slice(1) : `xl/${target}`);
  return { firstSheet: sheet === undefined ? undefined : partName(sheet), styles: styles === undefined ? 'xl/styles.xml' : partName(styles) };
}

/** Parses a small part (styles, the workbook, its relationships) at once. */
function parseWhole(part: ZipPart, on: { opentag: (tag: SaxesTagPlain) => void; closetag?: (tag: SaxesTagPlain) => void }): void {
  const parser = new SaxesParser({ xmlns: false });
  parser.on('doctype', () => {
    throw new Refused(`not a readable XLSX file: ${part.name} has a DOCTYPE`);
  });
  parser.on('opentag', on.opentag);
  if (on.closetag) parser.on('closetag', on.closetag);
  parser.on('error', (error) => {
    throw new Refused(`not a readable XLSX file: ${part.name}: ${error.message.slice(0, 200)}`);
  });
  parser.write(new TextDecoder().decode(part.data));
  parser.close();
}

class Refused extends Error {}

/**
 * Why a sheet's rows or columns exceed the limits, or undefined. Rows are counted as read-excel-file
 * (parseSheet.js) allocates them: a row numbered `r` is preceded by empty rows up to it, a row
 * without `r` comes after the last. A cell reference must be written as references are (`AB12`):
 * read-excel-file reads any characters before the digits as a column, and XML normalises spaces in
 * attributes (a line break in one reads as one space here, two characters there), so an unusual
 * reference could mean a different column to each reader. A DOCTYPE is refused for the same reason
 * (read-excel-file's parser does not read one as XML does); a package's XML has none (ECMA-376
 * Part 2 forbids DTDs).
 */
async function sheetExtentRefusal(part: ZipPart, percent?: { styles: ReadonlySet<number>; cells: Set<string> }): Promise<string | undefined> {
  const parser = new SaxesParser({ xmlns: false });
  let height = 0;
  let rowNumber: number | undefined;
  let inRow = false;
  let cells = 0;
  parser.on('doctype', () => {
    throw new Refused(`not a readable XLSX file: ${part.name} has a DOCTYPE`);
  });
  parser.on('opentag', (tag) => {
    const name = localName(tag.name);
    if (name === 'row') {
      const r = attribute(tag, 'r', part.name);
      if (r !== undefined && !/^\d+$/.test(r)) throw new Refused(`not a readable XLSX file: ${part.name}: row number '${r.slice(0, 20)}'`);
      rowNumber = r === undefined ? undefined : Number(r);
      inRow = true;
    } else if (name === 'c') {
      const r = attribute(tag, 'r', part.name);
      if (r === undefined) return;
      const reference = /^([A-Z]{1,3})(\d+)$/.exec(r);
      if (!reference) throw new Refused(`not a readable XLSX file: ${part.name}: cell reference '${r.slice(0, 20)}'`);
      // A row without its own number takes its first cell's. A cell numbered for another row than
      // the one it is in: read-excel-file places it by its row, a reference would name another cell.
      if (inRow && rowNumber !== undefined && Number(reference[2]) !== rowNumber) {
        throw new Refused(`not a readable XLSX file: ${part.name}: cell ${r} in row ${rowNumber}`);
      }
      if (inRow) rowNumber ??= Number(reference[2]);
      // An empty cell (<c r="CZ7" s="1"/>, a formatted one) holds no value and widens no row.
      if (tag.isSelfClosing) return;
      if (columnNumber(reference[1]!) > XLSX_MAX_COLUMNS) {
        throw new Refused(`cell ${r} is beyond column ${columnName(XLSX_MAX_COLUMNS)}: a payout report has at most ${XLSX_MAX_COLUMNS} columns`);
      }
      if (++cells > XLSX_MAX_CELLS) throw new Refused(`a sheet of the workbook has more than ${XLSX_MAX_CELLS.toLocaleString('en')} cells, more than a payout report holds: split the report`);
      if (percent && percent.styles.size > 0) {
        // A number cell (no t, or t="n") whose style shows a percentage.
        const style = attribute(tag, 's', part.name);
        if (style !== undefined && percent.styles.has(Number(style))) {
          const type = attribute(tag, 't', part.name);
          if (type === undefined || type === 'n') percent.cells.add(r);
        }
      }
    }
  });
  parser.on('closetag', (tag) => {
    if (localName(tag.name) !== 'row') return;
    height = Math.max(height + 1, rowNumber ?? 0);
    rowNumber = undefined;
    inRow = false;
    if (height > XLSX_MAX_ROWS) throw new Refused(`a sheet of the workbook has more than ${XLSX_MAX_ROWS.toLocaleString('en')} rows, more than a payout report holds: split the report`);
  });
  parser.on('error', (error) => {
    throw new Refused(`not a readable XLSX file: ${part.name}: ${error.message.slice(0, 200)}`);
  });
  const decoder = new TextDecoder();
  try {
    for (let at = 0; at < part.data.length; at += CHUNK_BYTES) {
      parser.write(decoder.decode(part.data.subarray(at, at + CHUNK_BYTES), { stream: true }));
      // The daemon's webhook receiver shares this event loop: it answers between chunks.
      await yieldToEventLoop();
    }
    parser.write(decoder.decode());
    parser.close();
  } catch (error) {
    if (error instanceof Refused) return error.message;
    throw error;
  }
  return undefined;
}

// A chunk took saxes 40-50 ms (a 46 MB sheet in 2.0 s, 2026-12, 2-core machine).
const CHUNK_BYTES = 1024 * 1024;

/** The name after its prefix, as read-excel-file takes it (up to the first ':'). */
const localName = (name: string) => name.slice(name.indexOf(':') + 1);

/** An attribute by its local name, as read-excel-file drops prefixes (but not xmlns:'s). */
function attribute(tag: SaxesTagPlain, wanted: string, part: string): string | undefined {
  // A loop, not entries().filter(): it runs for every cell of the sheet, 1.4 million in the largest report.
  let value: string | undefined;
  let found = 0;
  for (const name in tag.attributes) {
    if (name === wanted || (name.includes(':') && localName(name) === wanted && !name.startsWith('xmlns:'))) {
      value = tag.attributes[name];
      found += 1;
    }
  }
  // Two (r and x:r): read-excel-file keeps whichever comes last, and no writer writes both.
  if (found > 1) throw new Refused(`not a readable XLSX file: ${part}: a <${tag.name}> with two '${wanted}' attributes`);
  return value;
}

const columnNumber = (letters: string) => [...letters].reduce((n, c) => n * 26 + c.charCodeAt(0) - 64, 0);

/** A column's letters (1 -> A, 28 -> AB), as a cell reference writes them. */
export function columnName(n: number): string {
  let name = '';
  for (; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}
