import fc from 'fast-check';
import { TextDecoder } from 'node:util';
import { describe, expect, it } from 'vitest';
import { completeCharactersEnd, utf8Validator } from '../../src/statements/decode.js';

// The import decides a file's encoding from whether its bytes are valid UTF-8 (decode.ts
// encodingOf), reading the file in chunks that may end inside a character. The oracle here is an
// implementation of its own: the WHATWG decoder in fatal mode over the whole file.
function validWhole(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function validInChunks(bytes: Uint8Array, cuts: readonly number[]): boolean {
  const validator = utf8Validator();
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    validator.write(bytes.subarray(at, Math.max(at, cut)));
    at = Math.max(at, cut);
  }
  validator.write(bytes.subarray(at));
  return validator.valid();
}

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

describe('utf8Validator', () => {
  it('takes text cut inside each of its characters as valid', () => {
    const text = 'Müller € 😀 Zoë';
    const bytes = utf8(text);
    for (let cut = 0; cut <= bytes.length; cut += 1) expect(validInChunks(bytes, [cut]), `cut at ${cut}`).toBe(true);
    // every byte on its own
    expect(validInChunks(bytes, Array.from({ length: bytes.length }, (_, i) => i))).toBe(true);
  });

  it('refuses Windows-1252 text, a character the file cuts off, and the encoded halves of a surrogate pair', () => {
    expect(validInChunks(new Uint8Array([0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72]), [2])).toBe(false); // 'Müller' in Windows-1252
    expect(validInChunks(utf8('price €').subarray(0, 8), [7])).toBe(false); // the euro sign's first two of three bytes, at the end
    expect(validInChunks(new Uint8Array([0x61, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]), [2, 5])).toBe(false);
    expect(validInChunks(new Uint8Array([0xf4, 0x90, 0x80, 0x80]), [1])).toBe(false); // above U+10FFFF
    expect(validInChunks(new Uint8Array([0xc0, 0xaf]), [1])).toBe(false); // an overlong '/'
  });

  it('agrees with a fatal decoder of the whole file, however the file is cut', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 }).map(utf8);
    const damaged = fc
      .tuple(text, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }))
      .map(([bytes, edits]) => {
        const copy = new Uint8Array(bytes);
        for (const [at, value] of edits) if (copy.length > 0) copy[at % copy.length] = value;
        return copy;
      });
    const bytes = fc.oneof(text, damaged, fc.uint8Array({ maxLength: 40 }));
    fc.assert(
      fc.property(bytes, fc.array(fc.nat({ max: 45 }), { maxLength: 8 }), (b, cuts) => {
        expect(validInChunks(b, cuts)).toBe(validWhole(b));
      }),
      { numRuns: 3000 },
    );
  });

  it('finds where the last whole character ends', () => {
    expect(completeCharactersEnd(utf8('ab'))).toBe(2);
    expect(completeCharactersEnd(utf8('a€'))).toBe(4);
    expect(completeCharactersEnd(utf8('a€').subarray(0, 3))).toBe(1);
    expect(completeCharactersEnd(utf8('a😀').subarray(0, 4))).toBe(1);
    expect(completeCharactersEnd(utf8('a😀'))).toBe(5);
    expect(completeCharactersEnd(new Uint8Array(0))).toBe(0);
  });
});
