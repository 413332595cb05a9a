import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { quoted, StatementFormatError } from './types.js';

/**
 * The encoding of a statement file. UTF-16 with BOM is read as such; an XML declaration naming an
 * encoding (ISO-8859-1, ISO-8859-15 ...) is obeyed; otherwise UTF-8 (with or without BOM) when the
 * bytes are valid UTF-8, else Windows-1252, the code page of older German and Dutch MT940 and CSV
 * exports ('Müller' written as 0x4D 0xFC ...). Valid UTF-8 is almost never produced by chance
 * from Windows-1252 text with accented letters (an accented letter followed by the right
 * continuation bytes would be needed), so taking valid UTF-8 as UTF-8 is safe for these files.
 * WHATWG maps the label ISO-8859-1 to windows-1252 too: the bytes 0x80-0x9F that Latin-1 leaves
 * as control characters are the euro sign and typographic quotes in the files banks write.
 */
export function encodingOf(head: Uint8Array, validUtf8: boolean): string {
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  const start = Buffer.from(head.subarray(0, 200)).toString('latin1');
  const declared = /^(?:\xEF\xBB\xBF)?\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(start)?.[1]?.toLowerCase();
  if (declared && !/^utf-?8$/.test(declared)) {
    try {
      return new TextDecoder(declared).encoding;
    } catch {
      throw new StatementFormatError(`XML declares the encoding ${quoted(declared)}, which is not known`);
    }
  }
  return validUtf8 ? 'utf-8' : 'windows-1252';
}

/**
 * Checks chunk by chunk whether bytes are valid UTF-8. Each chunk's complete characters go through
 * node:buffer's isUtf8 (SIMD); the bytes of a character the chunk cut off wait for the next one. A
 * fatal TextDecoder did the same work in 328 ms of a CAMT.053 import of 100,000 entries (50 MiB)
 * that took 3.7 s in all (`node --cpu-prof`; bench/README.md, statements); isUtf8 reads the file in
 * a few milliseconds.
 */
export function utf8Validator(): { write(chunk: Uint8Array): void; valid(): boolean } {
  let ok = true;
  let carried: Uint8Array = new Uint8Array(0);
  return {
    write: (chunk) => {
      if (!ok || chunk.length === 0) return;
      const bytes = carried.length === 0 ? chunk : Buffer.concat([carried, chunk]);
      const end = completeCharactersEnd(bytes);
      ok = isUtf8(bytes.subarray(0, end));
      carried = bytes.slice(end);
    },
    valid: () => ok && carried.length === 0,
  };
}

/**
 * Where the last character that `bytes` holds whole ends: before a lead byte at one of the last
 * three positions whose sequence needs more bytes than follow it. Invalid bytes are left for
 * isUtf8 to refuse.
 */
export function completeCharactersEnd(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back]!;
    if (byte < 0x80) return bytes.length;
    if (byte < 0xc0) continue; // a continuation byte: look further back for its lead
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/**
 * A decoder for a file's chunks in the given encoding; a BOM is dropped. That includes a UTF-8 BOM
 * in front of text that is not valid UTF-8 (read as Windows-1252, the BOM's bytes would be the
 * text 'ï»¿' and hide a CSV's first column name): some exporters write the BOM and then their code
 * page.
 */
export function streamDecoder(encoding: string): { write(chunk: Uint8Array): string; end(): string } {
  const decoder = new TextDecoder(encoding);
  if (encoding !== 'windows-1252') return { write: (chunk) => decoder.decode(chunk, { stream: true }), end: () => decoder.decode() };
  // The text's first characters, held until there are three (one character per byte here).
  let start: string | null = '';
  const withoutBom = (text: string, last: boolean): string => {
    if (start === null) return text;
    start += text;
    if (start.length < UTF8_BOM_AS_WINDOWS_1252.length && !last) return '';
    const whole = start.startsWith(UTF8_BOM_AS_WINDOWS_1252) ? start.slice(UTF8_BOM_AS_WINDOWS_1252.length) : start;
    start = null;
    return whole;
  };
  return { write: (chunk) => withoutBom(decoder.decode(chunk, { stream: true }), false), end: () => withoutBom(decoder.decode(), true) };
}

const UTF8_BOM_AS_WINDOWS_1252 = '\u00EF\u00BB\u00BF';

/** A whole file's text. */
export function decodeStatement(bytes: Buffer | string): string {
  if (typeof bytes === 'string') return bytes.replace(/^\uFEFF/, '');
  const validator = utf8Validator();
  validator.write(bytes);
  const decoder = streamDecoder(encodingOf(bytes, validator.valid()));
  return decoder.write(bytes) + decoder.end();
}

/** `text` in slices of `size` UTF-16 units, one more where a slice would end between the two halves of a surrogate pair. */
export function* textSlices(text: string, size: number): Generator<string> {
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    yield text.slice(at, end);
    at = end;
  }
}
