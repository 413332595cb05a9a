import { inflateRawSync } from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';

/**
 * Test-side readers of the simulator's payout report files, written from the formats (RFC 4180,
 * ZIP's central directory, SpreadsheetML) and not from the simulator's writer, so a writer bug
 * cannot hide in a shared helper.
 */

/** CSV rows; the separator is `;` when the header holds one, else `,`. */
export function readCsv(text: string): string[][] {
  const separator = (text.split('\r\n')[0] ?? '').includes(';') ? ';' : ',';
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === separator) row.push(cell), (cell = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** The entries of a ZIP archive by name, from its central directory (stored or deflated). */
export function unzip(zip: Buffer): Map<string, Buffer> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('not a zip archive');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const out = new Map<string, Buffer>();
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('bad central directory entry');
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(dataAt, dataAt + compressed);
    out.set(name, method === 0 ? Buffer.from(data) : inflateRawSync(data));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return out;
}

export type XlsxCell = { type: 'number'; value: number } | { type: 'text'; value: string };

/** The first sheet's cells, row by row (no gaps in the simulator's files). */
export function readXlsx(file: Buffer): XlsxCell[][] {
  const parts = unzip(file);
  const parser = new XMLParser({ ignoreAttributes: false, parseTagValue: false, trimValues: false, isArray: (name) => ['si', 'row', 'c', 'r'].includes(name) });
  const text = (node: unknown): string => (typeof node === 'object' && node !== null ? String((node as Record<string, unknown>)['#text'] ?? '') : String(node ?? ''));
  const shared: string[] = [];
  const sst = parts.get('xl/sharedStrings.xml');
  if (sst) {
    for (const si of parser.parse(sst.toString('utf8')).sst.si ?? []) shared.push(si.t !== undefined ? text(si.t) : (si.r ?? []).map((r: { t: unknown }) => text(r.t)).join(''));
  }
  const sheet = parts.get('xl/worksheets/sheet1.xml');
  if (!sheet) throw new Error('no first sheet');
  const rows = parser.parse(sheet.toString('utf8')).worksheet.sheetData.row ?? [];
  const column = (ref: string) => [...ref.replace(/\d+$/, '')].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0) - 1;
  return rows.map((row: { c?: Record<string, unknown>[] }) => {
    // An empty cell may be left out: place each by its reference (A1, B1, ...).
    const cells: XlsxCell[] = [];
    for (const c of row.c ?? []) {
      const v = text(c.v);
      const at = column(String(c['@_r']));
      while (cells.length < at) cells.push({ type: 'text', value: '' });
      if (c['@_t'] === 's') cells.push({ type: 'text', value: shared[Number(v)] ?? '' });
      else if (c['@_t'] === 'inlineStr') cells.push({ type: 'text', value: text((c.is as Record<string, unknown>)?.t) });
      else if (c['@_t'] === 'str') cells.push({ type: 'text', value: v });
      else cells.push({ type: 'number', value: Number(v) });
    }
    return cells;
  });
}

const COLUMNS: Record<string, string> = {
  payoutreference: 'reference', separeference: 'reference', payoutid: 'reference', payoutuuid: 'reference', payoutref: 'reference',
  orderno: 'orderNo', docno: 'docNo', doctype: 'docType', currency: 'currency', transactionamount: 'amount', 'discount%': 'discountRate',
  'mdr%': 'mdrRate', transactionfee: 'fee', grosspurchaseprice: 'gross', discount: 'discount', vatondiscount: 'vat', transferamount: 'transfer',
  totaldeductions: 'total',
};

export interface ParsedRow {
  reference: string | null;
  orderNo: string;
  docNo: string;
  docType: 'invoice' | 'credit_note' | 'buyer_payment' | 'dispute';
  currency: string | null;
  amount: bigint;
  discountRate: number;
  mdrRate: number;
  fee: bigint;
  gross: bigint;
  discount: bigint;
  vat: bigint;
  transfer: bigint;
  total: bigint;
}

/** "-1.234,56 €", "(€1,234.56)", "12.00 EUR" to cents; the decimal mark is the file's. */
export function cents(text: string, decimal: ',' | '.'): bigint {
  let t = text.trim();
  const negative = t.startsWith('-') || t.startsWith('(');
  t = t.replace(/[()\-€£\s]|EUR|GBP/g, '').replaceAll(decimal === ',' ? '.' : ',', '');
  const m = new RegExp(`^(\\d+)\\${decimal}(\\d{2})$`).exec(t);
  if (!m) throw new Error(`not an amount: ${text}`);
  const v = BigInt(m[1]!) * 100n + BigInt(m[2]!);
  return negative ? -v : v;
}

/** "2,5" or "2.5" or a number cell to micros (2.5 % is 25,000). */
function micros(text: string, decimal: ',' | '.'): number {
  const [units, fraction = ''] = text.trim().split(decimal);
  return Number(units) * 10_000 + Number(fraction.padEnd(4, '0'));
}

/** Rows of either format in one shape; a CSV's decimal mark follows its separator. */
export function parseRows(cells: (string | XlsxCell)[][], decimalHint?: ',' | '.'): { header: string[]; rows: ParsedRow[] } {
  const [head, ...body] = cells;
  const header = (head ?? []).map((c) => (typeof c === 'string' ? c : String(c.value)));
  const keys = header.map((h) => {
    const key = COLUMNS[h.toLowerCase().replace(/[\s_]/g, '')];
    if (!key) throw new Error(`unknown column ${h}`);
    return key;
  });
  const decimal = decimalHint ?? '.';
  const rows = body.map((row) => {
    const out: Record<string, unknown> = { reference: null, currency: null };
    row.forEach((c, i) => {
      const key = keys[i]!;
      const raw = typeof c === 'string' ? c : c.type === 'text' ? c.value : null;
      const number = typeof c === 'object' && c.type === 'number' ? c.value : null;
      if (['reference', 'orderNo', 'docNo', 'currency'].includes(key)) out[key] = raw;
      else if (key === 'docType') out[key] = raw!.toLowerCase().replace(/[\s_]+/g, '_');
      else if (key === 'discountRate' || key === 'mdrRate') out[key] = number !== null ? Math.round(number * 10_000) : micros(raw!, decimal);
      else out[key] = number !== null ? BigInt(Math.round(number * 100)) : cents(raw!, decimal);
    });
    return out as unknown as ParsedRow;
  });
  return { header, rows };
}
