import { describe, expect, it } from 'vitest';
import { PayoutReportFormatError, readPayoutReport } from '../../src/payout-reports/read.js';
import { storedZip } from '../../src/payout-reports/xlsx-zip.js';

/*
 * An XLSX rate cell shown as a percentage is read as 100 times its stored value
 * (payout-reports/xlsx-limits.ts): which cells are, in workbooks whose every part a test writes
 * (styles.xml, workbook.xml, its relationships, the sheet), stored uncompressed. What each is
 * expected to read as is what LibreOffice Calc shows for the same file.
 */

const HEADER = ['Order No', 'Doc No', 'Doc Type', 'Transaction Amount', 'Discount %', 'MDR %', 'Transaction Fee', 'Gross Purchase Price', 'Discount', 'VAT on Discount', 'Transfer Amount', 'Total Deductions'];
const LETTERS = 'ABCDEFGHIJKL';

/** A stored ZIP of the parts, in order (a name may be given twice). */
const zip = (parts: [string, string][]): Buffer =>
  storedZip(parts.map(([name, text]) => ({ name, rawName: Buffer.from(name, 'utf8'), utf8: true, data: Buffer.from(text, 'utf8') })));

const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/><Override PartName="/xl/styles2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`;
const ROOT_RELS = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`;

const workbookXml = (...sheets: string[]) => `<?xml version="1.0" encoding="UTF-8"?><workbook ${NS}><sheets>${sheets.join('')}</sheets></workbook>`;
const relsXml = (...rels: string[]) => `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels.join('')}</Relationships>`;
const sheetRel = (id: string, target: string) => `<Relationship Id="${id}" Type="${REL}/worksheet" Target="${target}"/>`;
const stylesRel = (id: string, target: string) => `<Relationship Id="${id}" Type="${REL}/styles" Target="${target}"/>`;

/** styles.xml: cellXfs 0 General, 1 the given numFmtId; `numFmts` as given. */
const stylesXml = (numFmts: string, xf1: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${numFmts}<fonts count="1"><font/></fonts><fills count="1"><fill/></fills><borders count="1"><border/></borders><cellStyleXfs count="1"><xf numFmtId="0"/></cellStyleXfs><cellXfs count="2"><xf numFmtId="0" xfId="0"/>${xf1}</cellXfs></styleSheet>`;
/** Style 1 is 0.00% (built-in 10). */
const PERCENT_STYLES = stylesXml('', '<xf numFmtId="10" xfId="0" applyNumberFormat="1"/>');

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const textCell = (ref: string, s: string) => `<c r="${ref}" t="inlineStr"><is><t>${esc(s)}</t></is></c>`;
const numberCell = (ref: string, v: number | string, style?: number) => `<c r="${ref}"${style === undefined ? '' : ` s="${style}"`}><v>${v}</v></c>`;

/** A data row of one invoice at 2.5 %; the two rate cells given (E and F) as the XML of their <c>. */
function dataRow(row: number, rates: (ref: string) => string, rowAttribute = ` r="${row}"`, cellRow = row): string {
  const at = (i: number) => `${LETTERS[i]}${cellRow}`;
  return `<row${rowAttribute}>${textCell(at(0), 'ORD-1')}${textCell(at(1), 'INV-1')}${textCell(at(2), 'invoice')}${numberCell(at(3), 1234.56)}${rates(at(4))}${rates(at(5))}${numberCell(at(6), 0.3)}${numberCell(at(7), 1234.56)}${numberCell(at(8), 30.86)}${numberCell(at(9), 5.92)}${numberCell(at(10), 1197.48)}${numberCell(at(11), 37.08)}</row>`;
}
const headerRow = `<row r="1">${HEADER.map((h, i) => textCell(`${LETTERS[i]}1`, h)).join('')}</row>`;
const sheetXml = (...rows: string[]) => `<?xml version="1.0" encoding="UTF-8"?><worksheet ${NS}><sheetData>${rows.join('')}</sheetData></worksheet>`;

/** The usual parts of a one-sheet workbook, some replaced. */
function workbook(over: { styles?: string; sheet?: string; rels?: string; workbook?: string; extra?: [string, string][]; stylesName?: string }): Buffer {
  return zip([
    ['[Content_Types].xml', CONTENT_TYPES],
    ['_rels/.rels', ROOT_RELS],
    ['xl/workbook.xml', over.workbook ?? workbookXml('<sheet name="Report" sheetId="1" r:id="rId1"/>')],
    ['xl/_rels/workbook.xml.rels', over.rels ?? relsXml(sheetRel('rId1', 'worksheets/sheet1.xml'), stylesRel('rId2', 'styles.xml'))],
    [over.stylesName ?? 'xl/styles.xml', over.styles ?? PERCENT_STYLES],
    ['xl/worksheets/sheet1.xml', over.sheet ?? sheetXml(headerRow, dataRow(2, (ref) => numberCell(ref, 0.025, 1)))],
    ...(over.extra ?? []),
  ]);
}

const rates = async (file: Buffer) => (await readPayoutReport(file)).rows.map((r) => [r.discountRateMicros, r.mdrRateMicros]);

async function outcome(file: Buffer): Promise<unknown> {
  try {
    return { rates: await rates(file) };
  } catch (error) {
    return error instanceof PayoutReportFormatError ? { refused: error.message } : { crashed: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

/** styles.xml whose style 1 has the custom format `code` (as XML attribute text). */
const customFormat = (code: string) => stylesXml(`<numFmts count="1"><numFmt numFmtId="164" formatCode="${code}"/></numFmts>`, '<xf numFmtId="164" xfId="0"/>');
const rateRow = (value: number) => sheetXml(headerRow, dataRow(2, (ref) => numberCell(ref, value, 1)));
/** Refused, or read as the given rate: never another rate. */
const refusedOr = (micros: number) => expect.toSatisfy((o: unknown) => 'refused' in (o as object) || JSON.stringify(o) === JSON.stringify({ rates: [[micros, micros]] }));

describe('XLSX cells shown as a percentage, part by part', () => {
  // read-excel-file (and Excel, Calc) find the styles part through workbook.xml.rels; boundedXlsx
  // looks only at xl/styles.xml. Calc shows these cells as 2.50%.
  it('finds the percent styles in the styles part workbook.xml.rels names (xl/styles2.xml), not only at xl/styles.xml', async () => {
    const file = workbook({ stylesName: 'xl/styles2.xml', rels: relsXml(sheetRel('rId1', 'worksheets/sheet1.xml'), stylesRel('rId2', 'styles2.xml')) });
    expect(await outcome(file)).toEqual({ rates: [[25000, 25000]] });
  });

  // A format's sections apply by the value's sign (or a [condition]): a `%` in the negative, zero or
  // text section does not scale a positive value. Calc shows each of these cells as below.
  it.each([
    ['0.00;-0.00%', 0.5, 5000, '0.50'],
    ['0.00;-0.00;0.00;@%', 0.5, 5000, '0.50'],
    ['[&gt;=1]0.00;0.00%', 2.5, 25000, '2.50'],
  ])('reads a positive cell of format %s holding %s as the plain number Calc shows', async (code, value, micros) => {
    expect(await outcome(workbook({ styles: customFormat(code), sheet: rateRow(value) }))).toEqual({ rates: [[micros, micros]] });
  });

  // `_x` (a space as wide as x) and `*x` (fill with x) show no x: Calc shows 0.5 as "0.50   ".
  it.each([['0.00_%'], ['0.00*%']])('format %s shows no percent sign (the character after _ or * is not shown)', async (code) => {
    expect(await outcome(workbook({ styles: customFormat(code), sheet: rateRow(0.5) }))).toEqual({ rates: [[5000, 5000]] });
  });

  // Two parts of the same name: read-excel-file (and Calc) read the last, boundedXlsx takes the
  // percent cells of every copy (and the first workbook.xml's first sheet). The cell read holds 0.5
  // with no format (0.5 %); it is read as 50 %.
  it('a sheet part stored twice in the ZIP is refused, or its percent cells are those of the copy read', async () => {
    const file = workbook({ sheet: rateRow(0.025), extra: [['xl/worksheets/sheet1.xml', sheetXml(headerRow, dataRow(2, (ref) => numberCell(ref, 0.5)))]] });
    expect(await outcome(file)).toEqual(refusedOr(5000));
  });

  it('a workbook.xml stored twice is refused, or the first sheet is the one read-excel-file reads', async () => {
    const file = workbook({
      rels: relsXml(sheetRel('rId1', 'worksheets/sheet1.xml'), sheetRel('rId3', 'worksheets/sheet2.xml'), stylesRel('rId2', 'styles.xml')),
      extra: [
        ['xl/worksheets/sheet2.xml', sheetXml(headerRow, dataRow(2, (ref) => numberCell(ref, 0.5)))],
        ['xl/workbook.xml', workbookXml('<sheet name="B" sheetId="2" r:id="rId3"/>')],
      ],
    });
    expect(await outcome(file)).toEqual(refusedOr(5000));
  });

  // <row r="2"> holding cells A3..L3: read-excel-file puts them on row 2, boundedXlsx records
  // E3 and F3 as the percent cells, and grid.ts asks for E2 and F2.
  it('a row whose number disagrees with its cells\' references is refused, or its percent cells still read as percents', async () => {
    const file = workbook({ sheet: sheetXml(headerRow, dataRow(2, (ref) => numberCell(ref, 0.025, 1), ' r="2"', 3)) });
    expect(await outcome(file)).toEqual(refusedOr(25000));
  });

  // numFmtId is an unsignedInt: "010" is 10 (0.00%), and Calc shows 2.50%.
  it('an xf numFmtId written "010" is the built-in 0.00%', async () => {
    expect(await outcome(workbook({ styles: stylesXml('', '<xf numFmtId="010" xfId="0"/>') }))).toEqual({ rates: [[25000, 25000]] });
  });

  // A <numFmt> in a differential format (dxfs, for conditional formatting) defines no cell format;
  // here dxfs comes before cellXfs and its 0.00% replaces numFmt 164 (0.00). Calc shows 2.50.
  it('a numFmt inside <dxfs> does not redefine the cell format of the same id', async () => {
    const styles = `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts><numFmt numFmtId="164" formatCode="0.00"/></numFmts><dxfs><dxf><numFmt numFmtId="164" formatCode="0.00%"/></dxf></dxfs><cellXfs><xf numFmtId="0"/><xf numFmtId="164"/></cellXfs></styleSheet>`;
    expect(await outcome(workbook({ styles, sheet: rateRow(2.5) }))).toEqual({ rates: [[25000, 25000]] });
  });
});
