import { TextDecoder } from 'node:util';
import { StatementFormatError } from './types.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
// WHATWG maps the label ISO-8859-1 to windows-1252 too: the bytes 0x80-0x9F that Latin-1 leaves as
// control characters are the euro sign and typographic quotes in the files banks actually write.
const cp1252 = new TextDecoder('windows-1252');

/**
 * A statement file's text. UTF-8 (with or without BOM) and UTF-16 with BOM are read as such; an XML
 * declaration naming another encoding (ISO-8859-1, ISO-8859-15 ...) is obeyed; otherwise bytes that are not valid
 * UTF-8 are taken as Windows-1252, the code page of older German and Dutch MT940 and CSV exports
 * ('Müller' written as 0x4D 0xFC ...). Valid UTF-8 is almost never produced by chance from
 * Windows-1252 text with accented letters (an accented letter followed by the right continuation
 * bytes would be needed), so trying UTF-8 first and falling back is safe for these files.
 */
export function decodeStatement(bytes: Buffer | string): string {
  if (typeof bytes === 'string') return bytes.replace(/^\uFEFF/, '');
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const head = bytes.subarray(0, 200).toString('latin1');
  const declared = /^(?:\uFEFF|\xEF\xBB\xBF)?\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(head)?.[1]?.toLowerCase();
  if (declared && !/^utf-?8$/.test(declared)) {
    let decoder: TextDecoder;
    try {
      decoder = new TextDecoder(declared);
    } catch {
      throw new StatementFormatError(`XML declares the encoding '${declared}', which is not known`);
    }
    return decoder.decode(bytes);
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (error) {
    if (error instanceof TypeError) text = cp1252.decode(bytes);
    else throw new StatementFormatError(`cannot decode the file: ${(error as Error).message}`);
  }
  return text.replace(/^\uFEFF/, '');
}
