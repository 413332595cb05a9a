import { describe, expect, it } from 'vitest';
import { csvField, csvRecord, renderBatch } from '../../src/reports/format.js';
import { parseCsv } from './csv-reader.js';

describe('CSV (RFC 4180)', () => {
  it('quotes commas, quotes, CR and LF, doubles inner quotes, leaves plain text alone', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField(null)).toBe('');
    expect(csvField(42)).toBe('42');
    expect(csvRecord(['a', null, 'b,c'])).toBe('a,,"b,c"\r\n');
  });

  it('round-trips awkward values through an independent reader', () => {
    const values = ['x,y', '"quoted"', 'multi\r\nline', 'ünïcödé €', '', ' spaced ', '""'];
    const text = csvRecord(['a', 'b', 'c', 'd', 'e', 'f', 'g']) + csvRecord(values);
    expect(parseCsv(text)).toEqual([['a', 'b', 'c', 'd', 'e', 'f', 'g'], values]);
  });

  it('renders JSON batches that join into one valid array with the columns in order', () => {
    const columns = ['b', 'a'];
    const text = `[${renderBatch('json', columns, [{ a: 1, b: 'x"\n' }], true)}${renderBatch('json', columns, [{ a: null }], false)}\n]`;
    const parsed = JSON.parse(text) as Record<string, unknown>[];
    expect(parsed).toEqual([{ b: 'x"\n', a: 1 }, { b: null, a: null }]);
    expect(Object.keys(parsed[0]!)).toEqual(['b', 'a']);
  });
});
