import { describe, expect, it } from 'vitest';
import { textSlices } from '../../src/statements/decode.js';

// The import parses what it reads a slice at a time (src/statements/import.ts): the slices must
// give back the text whole, and none may end between the two halves of a character outside the
// Basic Multilingual Plane, which a reader would see as two lone surrogates.
describe('textSlices', () => {
  it('gives back the text, in slices of the size asked for', () => {
    const text = 'abcdefghij'.repeat(7);
    const slices = [...textSlices(text, 16)];
    expect(slices.join('')).toBe(text);
    expect(slices.map((s) => s.length)).toEqual([16, 16, 16, 16, 6]);
    expect([...textSlices('', 16)]).toEqual([]);
  });

  it('keeps a surrogate pair that straddles a slice end in the slice before', () => {
    const text = `${'a'.repeat(15)}😀${'b'.repeat(20)}`;
    const slices = [...textSlices(text, 16)];
    expect(slices.join('')).toBe(text);
    expect(slices[0]).toBe(`${'a'.repeat(15)}😀`);
    for (const s of slices) {
      expect(s.charCodeAt(s.length - 1) >= 0xd800 && s.charCodeAt(s.length - 1) <= 0xdbff).toBe(false);
      expect(s.charCodeAt(0) >= 0xdc00 && s.charCodeAt(0) <= 0xdfff).toBe(false);
    }
  });
});
