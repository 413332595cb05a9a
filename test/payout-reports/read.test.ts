import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import writeXlsxFile, { type SheetData } from 'write-excel-file/node';
import { PayoutReportFormatError, readPayoutReport, type PayoutReportRow } from '../../src/payout-reports/read.js';

/**
 * The payout report reader on files written here from the documented columns
 * (provider-merchant-docs.md, "The payout report"). The figures are one invoice of 1,234.56 at
 * 2.5 % MDR with the 0.30 fixed fee and 19 % VAT on discount + fee (30.864 -> 30.86; 19 % of
 * 31.16 = 5.9204 -> 5.92), and a credit note of 100.00.
 */
const HEADER = ['Order No', 'Doc No', 'Doc Type', 'Transaction Amount', 'Discount %', 'MDR %', 'Transaction Fee', 'Gross Purchase Price', 'Discount', 'VAT on Discount', 'Transfer Amount', 'Total Deductions'];

const INVOICE: PayoutReportRow = {
  line: 0,
  payoutReference: null,
  orderNo: 'ORD-1',
  docNo: 'INV-1',
  docType: 'invoice',
  currency: null,
  transactionAmountCents: 123456n,
  discountRateMicros: 25000,
  mdrRateMicros: 25000,
  transactionFeeCents: 30n,
  grossPurchasePriceCents: 123456n,
  discountCents: 3086n,
  vatOnDiscountCents: 592n,
  transferAmountCents: 119748n,
  totalDeductionsCents: 3708n,
};
const CREDIT_NOTE: PayoutReportRow = {
  ...INVOICE,
  docNo: 'CN-7',
  docType: 'credit_note',
  transactionAmountCents: -10000n,
  discountRateMicros: null,
  mdrRateMicros: null,
  transactionFeeCents: 0n,
  grossPurchasePriceCents: -10000n,
  discountCents: 0n,
  vatOnDiscountCents: 0n,
  transferAmountCents: -10000n,
  totalDeductionsCents: 0n,
};

const bytes = (text: string) => new TextEncoder().encode(text);
const lines = (...rows: string[]) => rows.join('\r\n') + '\r\n';

async function refusal(file: Uint8Array, options?: Parameters<typeof readPayoutReport>[1]): Promise<string> {
  const error = await readPayoutReport(file, options).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PayoutReportFormatError);
  return (error as Error).message;
}

describe('a CSV payout report', () => {
  it('with decimal commas, thousands dots, euro signs and ";" reads to integer cents, a title line above the header', async () => {
    const file = bytes(lines(
      'Auszahlungsbericht 2026-11;;;',
      '',
      HEADER.join(';'),
      'ORD-1;INV-1;Invoice;1.234,56 €;2,5 %;2,5;0,30 €;1.234,56 €;30,86 €;5,92 €;1.197,48 €;37,08 €',
      'ORD-1;CN-7;Credit Note;100,00;;;0;100,00;0,00;0,00;-100,00;0,00',
    ));
    const report = await readPayoutReport(file);
    expect(report.format).toBe('csv');
    expect(report.sha256).toBe(createHash('sha256').update(file).digest('hex'));
    // The credit note's positive amounts are stored negative: it reduces the payout.
    expect(report.rows).toEqual([
      { ...INVOICE, line: 4, currency: 'EUR' },
      { ...CREDIT_NOTE, line: 5 },
    ]);
    expect(typeof report.rows[0]!.transactionAmountCents).toBe('bigint');
  });

  it('with decimal points, "," separators, quoted thousands, GBP codes, parentheses and a payout reference synonym', async () => {
    const file = bytes(lines(
      ['SEPA Reference', 'Currency', ...HEADER].join(','),
      'PO0000000000000042,GBP,ORD-1,INV-1,invoice,"1,234.56",2.5,2.5,0.30,"GBP 1,234.56",30.86,5.92,"1,197.48",37.08',
      'PO0000000000000042,gbp,ORD-1,CN-7,credit_note,(100.00),,,0.00,(£100.00),0,0,-100,0',
    ));
    const report = await readPayoutReport(file);
    expect(report.rows).toEqual([
      { ...INVOICE, line: 2, currency: 'GBP', payoutReference: 'PO0000000000000042' },
      { ...CREDIT_NOTE, line: 3, currency: 'GBP', payoutReference: 'PO0000000000000042' },
    ]);
  });

  it('normalises every Doc Type spelling and stores buyer payments and disputes as reductions', async () => {
    const file = bytes(lines(
      HEADER.join(','),
      ',INV-1,INVOICE,10.00,,,0,10.00,0,0,10.00,0',
      ',CN-1,credit-note,5.00,,,0,5.00,0,0,5.00,0',
      ',INV-2,Buyer Payment,-7.50,,,0,-7.50,0,0,-7.50,0',
      ',INV-3, dispute ,€ 2.00-,,,0,2.00,0,0,2.00,0',
    ));
    const rows = (await readPayoutReport(file)).rows;
    expect(rows.map((r) => [r.docType, r.transactionAmountCents, r.grossPurchasePriceCents, r.transferAmountCents, r.orderNo])).toEqual([
      ['invoice', 1000n, 1000n, 1000n, null],
      ['credit_note', -500n, -500n, -500n, null],
      ['buyer_payment', -750n, -750n, -750n, null],
      ['dispute', -200n, -200n, -200n, null],
    ]);
  });

  it('finds headers in any case, spacing and punctuation, keeping "Discount %" apart from "Discount"', async () => {
    const header = ['order_no', 'DOC-NO', 'doc type', 'TransactionAmount', 'Discount (%)', 'mdr%', 'transaction_fee', 'gross purchase price', 'DISCOUNT', 'Vat On Discount', 'transfer.amount', 'Total  Deductions'];
    const file = bytes(lines(header.join(';'), 'ORD-1;INV-1;invoice;1234,56;2,5;2,5;0,3;1234,56;30,86;5,92;1197,48;37,08'));
    expect((await readPayoutReport(file)).rows).toEqual([{ ...INVOICE, line: 2 }]);
  });

  it('maps a file\'s own headers with the column map (PAYOUT_REPORT_COLUMNS)', async () => {
    const header = HEADER.map((h) => (h === 'Doc No' ? 'Belegnummer' : h === 'Transfer Amount' ? 'Auszahlung' : h));
    const file = bytes(lines(header.join(';'), 'ORD-1;INV-1;invoice;1234,56;2,5;2,5;0,30;1234,56;30,86;5,92;1197,48;37,08'));
    expect(await refusal(file)).toBe("missing required columns 'Doc No', 'Transfer Amount' (header on line 1)");
    const report = await readPayoutReport(file, { columns: { belegnummer: 'Doc No', 'AUSZAHLUNG': 'transfer_amount' } });
    expect(report.rows).toEqual([{ ...INVOICE, line: 2 }]);
    expect(await refusal(file, { columns: { Belegnummer: 'Document' } })).toMatch(/'Belegnummer' to 'Document', which is no documented column/);
  });

  it('refuses a file missing a required column, naming it; the optional ones may be absent', async () => {
    const without = (name: string) => HEADER.filter((h) => h !== name);
    expect(await refusal(bytes(lines(without('VAT on Discount').join(','), 'x')))).toBe("missing required column 'VAT on Discount' (header on line 1)");
    expect(await refusal(bytes(lines(without('Doc Type').join(','), 'x')))).toBe("missing required column 'Doc Type' (header on line 1)");
    const optional = ['Doc No', 'Doc Type', 'Transaction Amount', 'Transaction Fee', 'Gross Purchase Price', 'Discount', 'VAT on Discount', 'Transfer Amount', 'Total Deductions'];
    const rows = (await readPayoutReport(bytes(lines(optional.join(','), 'INV-1,invoice,10.00,0.30,10.00,0.25,0.10,9.35,0.65')))).rows;
    expect(rows[0]).toMatchObject({ orderNo: null, discountRateMicros: null, mdrRateMicros: null, payoutReference: null, transferAmountCents: 935n });
    expect(await refusal(bytes('just,some,text\n1,2,3\n'))).toMatch(/^no header row naming the documented columns \(Doc No, Doc Type/);
    expect(await refusal(bytes(lines([...HEADER, 'Doc Number'].join(','), 'x')), { columns: { 'Doc Number': 'Doc No' } })).toBe("header on line 1: two columns are Doc No: 'Doc No' and 'Doc Number'");
  });

  it.each([
    ['an amount that is not one', 'abc', "line 2, column 'Discount': 'abc' is not an amount"],
    ['an empty amount', '', "line 2, column 'Discount': is empty"],
    ['three decimals', '30,865', "line 2, column 'Discount': '30,865' has more than 2 decimals"],
    ['the other decimal separator', '30.86', "line 2, column 'Discount': '30.86' has the decimal separator '.', but line 2, column 'Transaction Amount' has ','"],
    ['a dollar sign', '$30,86', "line 2, column 'Discount': '$30,86' is not an amount"],
    ['two signs', '-(30,86)', "line 2, column 'Discount': '-(30,86)' has two signs"],
    ['bad grouping', '3.0,86', "line 2, column 'Discount': '3.0,86' has thousands separators that do not group three digits"],
  ])('refuses a bad cell naming its line and column: %s', async (_, discount, message) => {
    const file = bytes(lines(HEADER.join(';'), `ORD-1;INV-1;invoice;1234,56;2,5;2,5;0,30;1234,56;${discount};5,92;1197,48;37,08`));
    expect(await refusal(file)).toBe(message);
  });

  it('refuses other bad cells naming line and column', async () => {
    const row = (cells: Partial<Record<string, string>>) => HEADER.map((h) => cells[h] ?? { 'Doc No': 'INV-1', 'Doc Type': 'invoice' }[h] ?? '1.00').join(',');
    expect(await refusal(bytes(lines(HEADER.join(','), row({}), row({ 'Doc Type': 'refund' }))))).toBe("line 3, column 'Doc Type': 'refund' is none of invoice, credit note, buyer payment, dispute");
    expect(await refusal(bytes(lines(HEADER.join(','), row({ 'Doc No': ' ' }))))).toBe("line 2, column 'Doc No': is empty");
    expect(await refusal(bytes(lines(HEADER.join(','), row({ 'MDR %': '2.55555' }))))).toBe("line 2, column 'MDR %': '2.55555' has more than 4 decimals");
    expect(await refusal(bytes(lines(HEADER.join(','), row({ 'Discount %': '101' }))))).toBe("line 2, column 'Discount %': '101' is not between 0 and 100");
    expect(await refusal(bytes(lines(HEADER.join(','), row({ Discount: '€1.00', Transfer: '', 'VAT on Discount': '£1.00' }))))).toBe("line 2, column 'VAT on Discount': names GBP, but column 'Discount' names EUR");
    expect(await refusal(bytes(lines(['Currency', ...HEADER].join(','), `USD,${row({})}`)))).toBe("line 2, column 'Currency': 'USD' is neither EUR nor GBP");
    expect(await refusal(bytes(lines(['Currency', ...HEADER].join(','), `EUR,${row({ Discount: '£1.00' })}`)))).toBe("line 2, column 'Discount': names GBP, but the row's Currency is EUR");
    // A quoted cell spanning two lines: the next row's line is still where it starts in the file.
    expect(await refusal(bytes(lines(HEADER.join(','), row({ 'Doc No': '"INV\n1"' }), row({ Discount: 'x' }))))).toBe("line 4, column 'Discount': 'x' is not an amount");
  });

  it('refuses amounts whose decimal separator nothing in the file shows, rather than guess a factor of 1000', async () => {
    const file = bytes(lines(HEADER.join(';'), 'ORD-1;INV-1;invoice;1.000;;;0;1.000;0;0;1.000;0'));
    expect(await refusal(file)).toBe("line 2, column 'Transaction Amount': '1.000' could be read with either decimal separator (no amount in the file shows which one it uses)");
    const shown = bytes(lines(HEADER.join(';'), 'ORD-1;INV-1;invoice;1.000;;;0;1.000;0;0;1.000;0', 'ORD-1;INV-2;invoice;1,5;;;0;1,5;0;0;1,5;0'));
    expect((await readPayoutReport(shown)).rows.map((r) => r.transactionAmountCents)).toEqual([100000n, 150n]);
  });

  it('reads Windows-1252 text (the euro sign is 0x80) and a UTF-8 byte order mark', async () => {
    const text = lines(HEADER.join(';'), 'ORD-1;INV-1;invoice;1.234,56 €;2,5;2,5;0,30;1.234,56;30,86;5,92;1.197,48;37,08');
    const cp1252 = Uint8Array.from([...text].map((c) => (c === '€' ? 0x80 : c.charCodeAt(0))));
    expect((await readPayoutReport(cp1252)).rows).toEqual([{ ...INVOICE, line: 2, currency: 'EUR' }]);
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes(text)]);
    expect((await readPayoutReport(bom)).rows).toEqual([{ ...INVOICE, line: 2, currency: 'EUR' }]);
  });

  it('refuses an empty file and an Excel 97 workbook', async () => {
    expect(await refusal(new Uint8Array())).toBe('the file is empty');
    expect(await refusal(new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))).toMatch(/Excel 97-2003/);
  });
});

const text = (value: string) => ({ value, type: String });
const number = (value: number) => ({ value, type: Number });

describe('an XLSX payout report', () => {
  it('reads number cells by their exact digits and text cells as in a CSV; lines are the sheet\'s rows', async () => {
    const data: SheetData = [
      [text('Payout report')],
      HEADER.map(text),
      [text('ORD-1'), text('INV-1'), text('Invoice'), number(1234.56), number(2.5), number(2.5), number(0.3), number(1234.56), number(30.86), text('5,92 €'), number(1197.48), number(37.08)],
      [number(90017), number(4711), text('credit note'), number(100), null, null, number(0), number(100), number(0), number(0), number(-100), number(0)],
    ];
    const report = await readPayoutReport(await writeXlsxFile(data).toBuffer());
    expect(report.format).toBe('xlsx');
    expect(report.rows).toEqual([
      { ...INVOICE, line: 3, currency: 'EUR' },
      { ...CREDIT_NOTE, line: 4, orderNo: '90017', docNo: '4711' },
    ]);
  });

  it('refuses a number cell with more than two decimals, a date and a missing column, naming them', async () => {
    const row = (discount: ReturnType<typeof number> | { value: Date; type: DateConstructor; format: string }) =>
      [text('O'), text('INV-1'), text('invoice'), number(10), number(2.5), number(2.5), number(0), number(10), discount, number(0), number(10), number(0)];
    const file = async (data: SheetData) => writeXlsxFile(data).toBuffer();
    expect(await refusal(await file([HEADER.map(text), row(number(0.255))]))).toBe("line 2, column 'Discount': '0.255' has more than 2 decimals");
    expect(await refusal(await file([HEADER.map(text), row({ value: new Date('2026-11-25'), type: Date, format: 'yyyy-mm-dd' })]))).toBe("line 2, column 'Discount': holds a date, not an amount");
    expect(await refusal(await file([HEADER.filter((h) => h !== 'Transaction Fee').map(text)]))).toBe("missing required column 'Transaction Fee' (header on line 1)");
  });

  it('reads numbers a double cannot hold as written in decimal: 0.1 + 0.2 is refused, 1e21 cents are beyond the ledger', async () => {
    const row = (amount: number) => [text('O'), text('INV-1'), text('invoice'), number(amount), null, null, number(0), number(amount), number(0), number(0), number(amount), number(0)];
    const file = async (amount: number) => writeXlsxFile([HEADER.map(text), row(amount)]).toBuffer();
    expect(await refusal(await file(0.1 + 0.2))).toBe("line 2, column 'Transaction Amount': '0.30000000000000004' has more than 2 decimals");
    expect(await refusal(await file(1e21))).toMatch(/'1e\+21' is beyond the largest amount the ledger stores/);
    expect((await readPayoutReport(await file(123456789012.34))).rows[0]!.transactionAmountCents).toBe(12345678901234n);
  });

  // A spreadsheet shows 2.5 % from a cell that stores 0.025 with a percent format (how Excel and
  // Calc store "2.5%" typed in); read as a number, that is 0.025 %, and every fee check of the row
  // would fail against a contract of 2.5 %.
  it('reads a rate cell shown as a percentage (it stores the fraction) as the percent it shows; a "%" quoted in the format is text, not a percentage', async () => {
    const shownAsPercent = (value: number, format: string) => ({ value, type: Number, format });
    const row = (discount: ReturnType<typeof shownAsPercent>, mdr: ReturnType<typeof shownAsPercent>) =>
      [text('ORD-1'), text('INV-1'), text('invoice'), number(1234.56), discount, mdr, number(0.3), number(1234.56), number(30.86), number(5.92), number(1197.48), number(37.08)];
    const read = async (...rows: ReturnType<typeof row>[]) => (await readPayoutReport(await writeXlsxFile([HEADER.map(text), ...rows]).toBuffer())).rows;
    const [percent, decimals, quoted] = await read(
      row(shownAsPercent(0.025, '0.00%'), shownAsPercent(0.025, '0%')),
      row(shownAsPercent(0.029, '0.0000%'), shownAsPercent(0.00125, '0.000%')),
      row(shownAsPercent(2.5, '0.00" %"'), shownAsPercent(2.5, '0.00\\%')),
    );
    expect([percent!.discountRateMicros, percent!.mdrRateMicros]).toEqual([25000, 25000]);
    expect([decimals!.discountRateMicros, decimals!.mdrRateMicros]).toEqual([29000, 1250]);
    expect([quoted!.discountRateMicros, quoted!.mdrRateMicros]).toEqual([25000, 25000]);
    // The amounts of the same rows are read as before.
    expect(percent!.transactionAmountCents).toBe(123456n);
    // Past 100 % once shown as a percentage: refused, naming how the cell shows it.
    expect(await refusal(await writeXlsxFile([HEADER.map(text), row(shownAsPercent(2.5, '0.00%'), shownAsPercent(0.025, '0.00%'))]).toBuffer()))
      .toBe("line 2, column 'Discount %': '2.5 (shown as a percentage)' is not between 0 and 100");
  });
});
