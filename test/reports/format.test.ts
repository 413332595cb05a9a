import { describe, expect, it } from 'vitest';
import { csvField, csvHeader, csvRecord, neutralise, parseDelimiter, renderBatch } from '../../src/reports/format.js';
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

  it('neutralises text cells starting with = + - @ tab or CR (OWASP), but not numbers we wrote', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r']) expect(neutralise(`${start}1+1`)).toBe(`'${start}1+1`);
    expect(neutralise('a=1')).toBe('a=1');
    // What spreadsheets trim or fold before reading a formula: blanks, quotes, full-width signs.
    for (const start of [' =', '\n=', '\u00a0=', '\u3000=', '\ufeff=', '＝', '＋', '－', '＠', "'=", '"=', ' \'"=', ' -', '\n', '\u007f=', '\u0001=', '\u0085+']) {
      expect(neutralise(`${start}1+1`), JSON.stringify(start)).toBe(`'${start}1+1`);
    }
    for (const plain of ['a =1', 'x\n=1', 'Müller-4711', 'PO 12', "'quoted'", ' text']) expect(neutralise(plain), plain).toBe(plain);
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('-12.50', ',', true)).toBe('-12.50');
    expect(csvField('-12.50', ',', false)).toBe("'-12.50");
    // A numeric column holding something that is not a plain number is treated as text.
    expect(csvField('-1+2', ',', true)).toBe("'-1+2");
    expect(csvField(-3)).toBe('-3');
  });

  it('quotes by the chosen delimiter and starts with a BOM on request', () => {
    expect(csvRecord(['a;b', 'c,d'], ';')).toBe('"a;b";c,d\r\n');
    expect(csvRecord(['a\tb', 'c'], '\t')).toBe('"a\tb"\tc\r\n');
    expect(csvHeader({ columns: ['x', 'y'] }, { delimiter: ';', bom: true })).toBe('\uFEFFx;y\r\n');
    expect(parseDelimiter('semicolon')).toBe(';');
    expect(parseDelimiter('tab')).toBe('\t');
    expect(parseDelimiter(undefined)).toBe(',');
    expect(parseDelimiter('|')).toBeUndefined();
    expect(renderBatch('csv', { columns: ['n', 't'], numeric: new Set(['n']) }, [{ n: '-5', t: '-5' }], true)).toBe("-5,'-5\r\n");
  });
});
