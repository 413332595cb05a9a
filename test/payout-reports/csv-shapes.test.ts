import { describe, expect, it } from 'vitest';
import { PayoutReportFormatError, readPayoutReport } from '../../src/payout-reports/read.js';

/**
 * The payout report reader (src/payout-reports/grid.ts, rows.ts) on CSV shapes a spreadsheet writes:
 * unquoted decimal commas in a ',' file, a quoted cell spanning a CRLF, UTF-16. Each is read with
 * the right cells and lines, or refused naming the line. Fixtures are written from
 * provider-merchant-docs.md ("The payout report") and docs/payout-reports.md.
 */
const HEADER = ['Order No', 'Doc No', 'Doc Type', 'Transaction Amount', 'Transaction Fee', 'Gross Purchase Price', 'Discount', 'VAT on Discount', 'Transfer Amount', 'Total Deductions'];

describe('a "," separated CSV whose amounts carry unquoted decimal commas', () => {
  // 1,234.56 invoice written by a de-DE spreadsheet into a "," separated file without quoting:
  // every amount is split in two cells, the row has 17 cells under a 10-column header.
  const text = `${HEADER.join(',')}\r\nO-1,INV-1,invoice,1234,56,0,30,1234,56,30,86,5,92,1197,48,37,08\r\n`;

  it('is refused naming the line, not read with every amount shifted into the next column', async () => {
    let read: unknown;
    try {
      const r = await readPayoutReport(Buffer.from(text));
      read = r.rows.map((x) => ({ ta: x.transactionAmountCents, fee: x.transactionFeeCents, transfer: x.transferAmountCents }));
    } catch (error) {
      read = error;
    }
    // Read by position, the cells would be 1234.00, 56.00 and 30.00: every amount shifted.
    expect(read).toBeInstanceOf(PayoutReportFormatError);
    expect((read as Error).message).toMatch(/line 2/);
  });
});

describe('a CRLF file with a quoted cell spanning two lines', () => {
  const row = (doc: string, ta = '100,00') => `O-1;${doc};invoice;${ta};0,30;100,00;2,90;0,61;96,19;3,81`;
  // line 1 header, lines 2-3 the quoted Doc No, line 4 INV-2, line 5 INV-3
  const lines = [HEADER.join(';'), row('"INV\r\n1"'), row('INV-2'), row('INV-3')];

  it('gives each row the line it starts on (stored as payout_report_rows.line, quoted in findings)', async () => {
    const r = await readPayoutReport(Buffer.from(`${lines.join('\r\n')}\r\n`));
    // csv-parse counts a CRLF inside quotes as two lines: lines 3, 5, 6 if only the LF were subtracted.
    expect(r.rows.map((x) => x.line)).toEqual([2, 4, 5]);
  });

  it('names the line of a bad cell after it', async () => {
    const bad = [HEADER.join(';'), row('"INV\r\n1"'), row('INV-2', 'x')];
    // Not line 5 of a file of 4 lines.
    await expect(readPayoutReport(Buffer.from(`${bad.join('\r\n')}\r\n`))).rejects.toThrow(/^line 4, column 'Transaction Amount'/);
  });
});

describe('a UTF-16LE CSV with its byte order mark (what Excel\'s "Unicode Text"/LibreOffice UTF-16 export writes)', () => {
  const text = `${HEADER.join(';')}\r\nO-1;INV-1;invoice;1.234,56;0,30;1.234,56;30,86;5,92;1.197,48;37,08\r\n`;
  const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);

  it('is read (as the statement reader reads UTF-16 with a BOM) or refused naming its encoding, never a message full of NULs', async () => {
    let outcome: string;
    try {
      const r = await readPayoutReport(bytes);
      outcome = r.rows.length === 1 && r.rows[0]!.transactionAmountCents === 123456n ? 'read' : `misread: ${JSON.stringify(r.rows.map((x) => String(x.transactionAmountCents)))}`;
    } catch (error) {
      const message = (error as Error).message;
      // Not read as Windows-1252, with a NUL between every two characters of the message.
      outcome = /UTF-16|encoding/i.test(message) && !message.includes('\0') ? 'refused naming the encoding' : `unclear refusal: ${JSON.stringify(message)}`;
    }
    expect(['read', 'refused naming the encoding']).toContain(outcome);
  });
});
