import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import writeXlsxFile from 'write-excel-file/node';
import { DEFAULT_PAYOUT_REPORT_MAX_FILE_BYTES } from '../../src/config/schema.js';
import { PayoutReportFormatError, readPayoutReport } from '../../src/payout-reports/read.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * PAYOUT_REPORT_MAX_FILE_BYTES counts an XLSX's compressed bytes. Within 8 MiB a workbook of short
 * rows holds a million of them (read-excel-file took 76 s and 1.4 GB, then failed), and one of two
 * cells, the second on row 30,000,000, is 1.5 KB and made read-excel-file allocate every row
 * between until the daemon ran out of heap. The workbooks here are written as ZIP archives by hand
 * (APPNOTE.TXT), so a test can make one whose sizes lie.
 */
let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase('payout_report_xlsx_limits');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-payout-xlsx-limits-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Part {
  name: string;
  /** deflated */
  packed: Buffer;
  size: number;
  crc: number;
}

const deflated = (name: string, xml: string): Part => {
  const data = Buffer.from(xml, 'utf8');
  return { name, packed: deflateRawSync(data), size: data.length, crc: crc32(data) };
};

/** A part deflated as it is generated, a megabyte at a time, so a test holds no 100 MB string. */
async function deflatedStream(name: string, pieces: Iterable<string | Buffer>): Promise<Part> {
  const deflate = createDeflateRaw();
  const chunks: Buffer[] = [];
  deflate.on('data', (c: Buffer) => chunks.push(c));
  const done = once(deflate, 'end');
  let size = 0;
  let crc = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    const data = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    size += data.length;
    crc = crc32(data, crc);
    if (!deflate.write(data)) await once(deflate, 'drain');
  };
  for (const piece of pieces) {
    const data = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
    pending.push(data);
    pendingBytes += data.length;
    if (pendingBytes >= 1024 * 1024) await flush();
  }
  await flush();
  deflate.end();
  await done;
  return { name, packed: Buffer.concat(chunks), size, crc };
}

/** A ZIP of deflated parts; `claimedSize` is the inflated size both headers state (a lie, if set). */
function zipOf(parts: Part[], claimedSize?: number): Buffer {
  const out: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const part of parts) {
    const name = Buffer.from(part.name);
    const size = claimedSize ?? part.size;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(part.crc, 14);
    local.writeUInt32LE(part.packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(part.crc, 16);
    entry.writeUInt32LE(part.packed.length, 20);
    entry.writeUInt32LE(size, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE(offset, 42);
    out.push(local, name, part.packed);
    central.push(entry, name);
    offset += 30 + name.length + part.packed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...out, directory, end]);
}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PACKAGE_RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';

/** A workbook of one sheet around `sheet` (the sheet part, already deflated). */
function workbook(sheet: Part, claimedSize?: number): Buffer {
  const parts = [
    deflated(
      '[Content_Types].xml',
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`,
    ),
    deflated('_rels/.rels', `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PACKAGE_RELS}"><Relationship Id="rId1" Type="${RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`),
    deflated('xl/workbook.xml', `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${MAIN}" xmlns:r="${RELS}"><sheets><sheet name="Payouts" sheetId="1" r:id="rId1"/></sheets></workbook>`),
    deflated('xl/_rels/workbook.xml.rels', `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PACKAGE_RELS}"><Relationship Id="rId1" Type="${RELS}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`),
  ];
  return zipOf([...parts, sheet], claimedSize);
}

const sheetXml = (rows: string) => `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>${rows}</sheetData></worksheet>`;
const sheetPart = (rows: string) => deflated('xl/worksheets/sheet1.xml', sheetXml(rows));

const HEADER = ['Order No', 'Doc No', 'Doc Type', 'Transaction Amount', 'Discount %', 'MDR %', 'Transaction Fee', 'Gross Purchase Price', 'Discount', 'VAT on Discount', 'Transfer Amount', 'Total Deductions'];
const LETTERS = 'ABCDEFGHIJKL';
const text = (ref: string, value: string) => `<c r="${ref}" t="inlineStr"><is><t>${value}</t></is></c>`;
const num = (ref: string, value: string) => `<c r="${ref}"><v>${value}</v></c>`;
const headerRow = `<row r="1">${HEADER.map((h, i) => text(`${LETTERS[i]}1`, h)).join('')}</row>`;
/** A valid invoice row (docs/payout-reports.md's arithmetic), then `extra` cells. */
const invoiceRow = (n: number, extra = '') =>
  `<row r="${n}">${text(`A${n}`, `ORD-${n}`)}${text(`B${n}`, `INV-${n}`)}${text(`C${n}`, 'invoice')}` +
  ['1234.56', '2.5', '2.5', '0.3', '1234.56', '30.86', '5.92', '1197.48', '37.08'].map((v, i) => num(`${LETTERS[i + 3]}${n}`, v)).join('') +
  `${extra}</row>`;

async function refusal(bytes: Buffer): Promise<string> {
  const error = await readPayoutReport(bytes).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PayoutReportFormatError);
  return (error as Error).message;
}

// The time bounds tell a refusal before reading (seconds) from reading the whole workbook first
// (read-excel-file: 76-119 s, then failing); they are loose because the suite shares two cores, where
// the cells case took 20.8 s once beside other tests. Speed itself is measured in bench/, not here.
describe('an XLSX payout report is held to what a payout report can be', () => {
  it('the inbox, in a process with the Kubernetes manifest\'s 512 MB heap, moves a 1.5 KB workbook whose second row is row 30,000,000 to failed/', async () => {
    const dataDir = path.join(root, 'gap');
    await mkdir(path.join(dataDir, 'payout-inbox'), { recursive: true });
    const file = workbook(sheetPart(`${headerRow}<row r="30000000">${num('A30000000', '1')}</row>`));
    expect(file.length).toBeLessThan(2000);
    await writeFile(path.join(dataDir, 'payout-inbox', 'gap.xlsx'), file);
    const child = fileURLToPath(new URL('./inbox-big-child.ts', import.meta.url));
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--max-old-space-size=512', child, dataDir, db.url], { encoding: 'utf8', timeout: 120_000 });
    const fatal = run.stderr.split('\n').find((l) => l.includes('FATAL')) ?? '';
    expect({ status: run.status, signal: run.signal, fatal }).toEqual({ status: 0, signal: null, fatal: '' });
    expect(await readdir(path.join(dataDir, 'payout-inbox', 'failed'))).toEqual(['gap.xlsx', 'gap.xlsx.error']);
    expect(await readFile(path.join(dataDir, 'payout-inbox', 'failed', 'gap.xlsx.error'), 'utf8')).toBe(
      'a sheet of the workbook has more than 150,000 rows, more than a payout report holds: split the report\n',
    );
  }, 150_000);

  it('refuses 1,000,000 rows in a 5 MB file within seconds (read-excel-file took 76-119 s, then failed), and reads a sheet whose last row is row 150,000', async () => {
    function* rows() {
      yield `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>${headerRow}`;
      for (let n = 2; n <= 1_000_000; n++) yield `<row r="${n}">${num(`A${n}`, '1')}</row>`;
      yield '</sheetData></worksheet>';
    }
    const sheet = await deflatedStream('xl/worksheets/sheet1.xml', rows());
    const file = workbook(sheet);
    expect(sheet.size).toBeGreaterThan(45_000_000);
    expect(file.length).toBeLessThan(DEFAULT_PAYOUT_REPORT_MAX_FILE_BYTES);
    const started = performance.now();
    expect(await refusal(file)).toBe('a sheet of the workbook has more than 150,000 rows, more than a payout report holds: split the report');
    expect(performance.now() - started).toBeLessThan(30_000);

    // The limit counts rows as read-excel-file allocates them: empty ones up to a row's number.
    const last = await readPayoutReport(workbook(sheetPart(`${headerRow}${invoiceRow(2)}${invoiceRow(150_000)}`)));
    expect(last.rows.map((r) => [r.line, r.docNo])).toEqual([
      [2, 'INV-2'],
      [150_000, 'INV-150000'],
    ]);
    expect(await refusal(workbook(sheetPart(`${headerRow}${invoiceRow(2)}${invoiceRow(150_001)}`)))).toBe(
      'a sheet of the workbook has more than 150,000 rows, more than a payout report holds: split the report',
    );
  }, 300_000);

  it('refuses a workbook whose XML inflates past 128 MiB before reading it, whether its sizes say so or lie', async () => {
    // 130 MiB of spaces inside the worksheet: a 130 KB deflate stream.
    const spaces = Buffer.alloc(1024 * 1024, 0x20);
    const sheet = await deflatedStream('xl/worksheets/sheet1.xml', [
      `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}">`,
      ...Array.from({ length: 130 }, () => spaces),
      `<sheetData>${headerRow}${invoiceRow(2)}</sheetData></worksheet>`,
    ]);
    const said = workbook(sheet);
    const lying = workbook(sheet, 1000);
    expect(lying.length).toBeLessThan(1024 * 1024);
    const message = "the workbook's XML is larger than 128 MiB unzipped, more than a payout report of 150,000 rows holds: split the report";
    for (const file of [said, lying]) {
      const started = performance.now();
      expect(await refusal(file)).toBe(message);
      expect(performance.now() - started).toBeLessThan(30_000);
    }
  }, 300_000);

  it('refuses a value beyond column BL (64 columns); an empty formatted cell anywhere holds none', async () => {
    expect(await refusal(workbook(sheetPart(`${headerRow}${invoiceRow(2, num('BM2', '1'))}`)))).toBe('cell BM2 is beyond column BL: a payout report has at most 64 columns');
    const wide = await readPayoutReport(workbook(sheetPart(`${headerRow}${invoiceRow(2, `${num('BL2', '1')}<c r="XFD2" s="1"/>`)}`)));
    expect(wide.rows.map((r) => r.docNo)).toEqual(['INV-2']);
  });

  it('refuses more than 3,000,000 cells holding values (150,000 rows of 20 columns)', async () => {
    const columns = Array.from({ length: 64 }, (_, i) => (i < 26 ? '' : String.fromCharCode(64 + Math.floor(i / 26))) + String.fromCharCode(65 + (i % 26)));
    const row = `<row r="#">${columns.map((c) => num(`${c}#`, '1')).join('')}</row>`.split('#');
    function* rows() {
      yield `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>`;
      for (let n = 1; n <= 46_876; n++) yield row.join(String(n));
      yield '</sheetData></worksheet>';
    }
    const file = workbook(await deflatedStream('xl/worksheets/sheet1.xml', rows()));
    expect(file.length).toBeLessThan(DEFAULT_PAYOUT_REPORT_MAX_FILE_BYTES);
    const started = performance.now();
    expect(await refusal(file)).toBe('a sheet of the workbook has more than 3,000,000 cells, more than a payout report holds: split the report');
    expect(performance.now() - started).toBeLessThan(60_000);
  }, 300_000);

  it('refuses what read-excel-file could read otherwise than XML does: a DOCTYPE, a reference with a line break in it', async () => {
    const doctype = deflated('xl/worksheets/sheet1.xml', sheetXml(`${headerRow}${invoiceRow(2)}`).replace('<worksheet', '<!DOCTYPE worksheet><worksheet'));
    expect(await refusal(workbook(doctype))).toBe('not a readable XLSX file: xl/worksheets/sheet1.xml has a DOCTYPE');
    // read-excel-file takes 'ZZZ\r\n2' as column 12,354,548, XML (and so this check) as 'ZZZ 2'.
    expect(await refusal(workbook(sheetPart(`${headerRow}${invoiceRow(2, num('ZZZ\r\n2', '1'))}`)))).toBe(
      "not a readable XLSX file: xl/worksheets/sheet1.xml: cell reference 'ZZZ 2'",
    );
  });

  it('reads a report as write-excel-file writes it (shared strings, number cells), 5,000 rows', async () => {
    const cell = (value: string | number) => (typeof value === 'number' ? { value, type: Number } : { value, type: String });
    const data = [HEADER.map(cell)];
    for (let n = 1; n <= 5_000; n++) data.push([`ORD-${n}`, `INV-${n}`, 'Invoice', 1234.56, 2.5, 2.5, 0.3, 1234.56, 30.86, 5.92, 1197.48, 37.08].map(cell));
    const report = await readPayoutReport(await writeXlsxFile(data).toBuffer());
    expect(report.format).toBe('xlsx');
    expect(report.rows.length).toBe(5_000);
    expect(report.rows[4_999]).toMatchObject({ line: 5_001, docNo: 'INV-5000', transferAmountCents: 119_748n });
  });
});
