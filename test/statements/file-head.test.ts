import { describe, expect, it } from 'vitest';
import { streamDecoder } from '../../src/statements/decode.js';
import { parseStatement } from '../../src/statements/detect.js';
import { importStatementSource, type ChunkSource } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { mt940Statement } from './fixtures.js';

let db: TestDatabase;
useTestDatabase('statements_file_head', (database) => (db = database));

/** The bytes in chunks of `first` bytes, then the rest at once. */
const chunked =
  (bytes: Buffer, first: number): ChunkSource =>
  async function* () {
    let at = 0;
    for (; at + first < bytes.length && at < 64; at += first) yield bytes.subarray(at, at + first);
    yield bytes.subarray(at);
  };

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

describe('the start of a statement file', () => {
  it('decides the encoding and the format from enough of the file, however small the first chunks', async () => {
    const mt940 = mt940Statement('1', [{ dc: 'C', cents: 100n, ref: 'R1' }], 100100n);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(mt940.toString('latin1'), 'utf16le')]);
    const tiny = await importStatementSource(db, 'sandbox', chunked(mt940, 10), 'tiny.sta');
    expect(tiny).toMatchObject({ format: 'mt940', linesRead: 1, linesNew: 1 });
    // The same statement in UTF-16 with its BOM, the first chunk one byte: the same booking, known.
    const wide = await importStatementSource(db, 'sandbox', chunked(utf16, 1), 'wide.sta');
    expect(wide).toMatchObject({ format: 'mt940', linesRead: 1, linesNew: 0, linesKnown: 1 });
  });

  it('drops a UTF-8 BOM in front of text in a Windows code page, as in front of UTF-8', async () => {
    const text = 'booking_date,amount,currency,remittance\r\n2026-03-02,1.00,EUR,Müller\r\n';
    const cp1252 = Buffer.from(text, 'latin1');
    const plain = parseStatement(cp1252);
    expect(plain.lines).toHaveLength(1);
    expect(plain.lines[0]!.remittance).toBe('Müller');
    expect(parseStatement(Buffer.concat([BOM, cp1252])).lines).toEqual(plain.lines);
    expect(parseStatement(Buffer.concat([BOM, Buffer.from(text, 'utf8')])).lines).toEqual(plain.lines);
    const imported = await importStatementSource(db, 'production', chunked(Buffer.concat([BOM, cp1252]), 1), 'bom.csv');
    expect(imported).toMatchObject({ format: 'csv', linesRead: 1, linesNew: 1 });
    const [line] = await db.sql<{ remittance: string }[]>`select remittance from statement_lines where environment = 'production'`;
    expect(line!.remittance).toBe('Müller');
  });

  it('keeps the start of Windows-1252 text that only looks like the BOM in part, in pieces of any size', () => {
    for (const bytes of [Buffer.from([0xef, 0xbb, 0x41, 0x42]), Buffer.from([0xef]), Buffer.from('ab', 'latin1'), Buffer.concat([BOM, Buffer.from('x')])]) {
      const whole = streamDecoder('windows-1252');
      const expected = whole.write(bytes) + whole.end();
      const byByte = streamDecoder('windows-1252');
      let text = '';
      for (const byte of bytes) text += byByte.write(Uint8Array.of(byte));
      expect(text + byByte.end()).toBe(expected);
    }
    const one = streamDecoder('windows-1252');
    expect(one.write(Buffer.from([0xef, 0xbb, 0x41])) + one.end()).toBe('ï»A');
    const bom = streamDecoder('windows-1252');
    expect(bom.write(Buffer.concat([BOM, Buffer.from('x')])) + bom.end()).toBe('x');
  });
});
