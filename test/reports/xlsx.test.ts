import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAYOUT_COLUMNS, PAYOUT_SHAPE } from '../../src/reports/payouts.js';
import type { ReportRow } from '../../src/reports/source.js';
import { readableHeader, renderXlsx } from '../../src/reports/xlsx.js';
import { convertToFods, readFods } from '../web/libreoffice.js';

const LONG_REFERENCE = 'SEPA-REF-2026-11-25-0000000000000000000000000000000042';

const row = (over: ReportRow): ReportRow => ({ ...Object.fromEntries(PAYOUT_COLUMNS.map((c) => [c, null])), ...over });

describe('XLSX downloads', () => {
  it('reads headers as words; cents columns say so', () => {
    expect(readableHeader('credited_amount')).toBe('Credited amount');
    expect(readableHeader('credited_cents')).toBe('Credited (cents)');
    expect(readableHeader('external_reference_id')).toBe('External reference ID');
    expect(readableHeader('payout_uuid')).toBe('Payout UUID');
    expect(readableHeader('ack_note')).toBe('Acknowledgement note');
    expect(readableHeader('report_vat_cents')).toBe('Report VAT (cents)');
    expect(readableHeader('counterparty_iban')).toBe('Counterparty IBAN');
  });

  it('opens in LibreOffice with readable headers, currency-formatted numbers and columns as wide as the references', async () => {
    const rows = [
      row({ payout_uuid: '0b5e3c1a-6a1f-4f55-9d7e-2a1c5e0f9a10', sepa_reference: LONG_REFERENCE, amount_cents: '123456789', amount: '1234567.89', currency: 'EUR', status: 'matched', credited_cents: '123456789', credited_amount: '1234567.89', difference: '0.00', received_at: '2026-11-25T10:00:00.000Z' }),
      row({ payout_uuid: '5d1c8f2e-0000-4000-8000-000000000001', sepa_reference: 'S2', amount_cents: '500', amount: '5.00', currency: 'EUR', status: 'unmatched', difference: '-5.00' }),
    ];
    const dir = await mkdtemp(path.join(tmpdir(), 'xlsx-'));
    const file = path.join(dir, 'payouts.xlsx');
    await writeFile(file, await renderXlsx(PAYOUT_SHAPE, rows, 'payouts'));

    const sheet = await readFods(await convertToFods(file, dir));
    const col = (name: string) => PAYOUT_COLUMNS.indexOf(name as (typeof PAYOUT_COLUMNS)[number]);
    expect(sheet[0]!.map((c) => c.text)).toEqual(PAYOUT_COLUMNS.map(readableHeader));
    expect(sheet[0]![col('credited_amount')]!.text).toBe('Credited amount');

    const amount = sheet[1]![col('amount')]!;
    expect(amount.type).toBe('float');
    expect(Number(amount.value)).toBe(1234567.89);
    expect(amount.text).toBe('1,234,567.89 EUR');
    expect(sheet[2]![col('difference')]!.text).toBe('-5.00 EUR');
    const cents = sheet[1]![col('amount_cents')]!;
    expect(cents).toMatchObject({ type: 'float', value: '123456789', text: '123,456,789' });
    expect(sheet[1]![col('sepa_reference')]!.text).toBe(LONG_REFERENCE);

    // Column widths as written (in characters): no reference, amount or header is cut.
    const xml = execFileSync('unzip', ['-p', file, 'xl/worksheets/sheet1.xml'], { encoding: 'utf8' });
    const widths = new Map<number, number>();
    for (const m of xml.matchAll(/<col [^>]*min="(\d+)"[^>]*max="(\d+)"[^>]*width="([\d.]+)"/g)) {
      for (let i = Number(m[1]); i <= Number(m[2]); i++) widths.set(i - 1, Number(m[3]));
    }
    expect(widths.get(col('sepa_reference'))).toBeGreaterThanOrEqual(LONG_REFERENCE.length);
    expect(widths.get(col('payout_uuid'))).toBeGreaterThanOrEqual(36);
    expect(widths.get(col('amount'))).toBeGreaterThanOrEqual('1,234,567.89 EUR'.length);
    expect(widths.get(col('received_at'))).toBeGreaterThanOrEqual('2026-11-25 10:00:00'.length);
    for (const [i, w] of widths) expect(w, PAYOUT_COLUMNS[i]).toBeGreaterThanOrEqual(readableHeader(PAYOUT_COLUMNS[i]!).length);
    // Short columns stay narrow instead of one width for all.
    expect(widths.get(col('currency'))).toBeLessThan(15);
  }, 180_000);
});
