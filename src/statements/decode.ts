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

/** Checks chunk by chunk (a character may span two) whether bytes are valid UTF-8. */
export function utf8Validator(): { write(chunk: Uint8Array): void; valid(): boolean } {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let ok = true;
  const run = (f: () => void) => {
    if (!ok) return;
    try {
      f();
    } catch {
      ok = false;
    }
  };
  return {
    write: (chunk) => run(() => decoder.decode(chunk, { stream: true })),
    valid: () => {
      run(() => decoder.decode());
      return ok;
    },
  };
}

/** A decoder for a file's chunks in the given encoding; a BOM is dropped. */
export function streamDecoder(encoding: string): { write(chunk: Uint8Array): string; end(): string } {
  const decoder = new TextDecoder(encoding);
  return { write: (chunk) => decoder.decode(chunk, { stream: true }), end: () => decoder.decode() };
}

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
