import { describe, expect, it } from 'vitest';
import { parseReferenceList } from '../../src/webhooks/reference-list.js';

describe('external_reference_ids as the provider may send them', () => {
  it('splits a plain list on commas or semicolons only, keeping spaces inside a reference', () => {
    expect(parseReferenceList('RE 2026-1, RE 2026-2')).toEqual(['RE 2026-1', 'RE 2026-2']);
    expect(parseReferenceList('INV-1;INV-2 ; INV-3')).toEqual(['INV-1', 'INV-2', 'INV-3']);
    expect(parseReferenceList('INV-1')).toEqual(['INV-1']);
    expect(parseReferenceList('  ')).toEqual([]);
  });

  it('reads a JSON list as a list, in the string or as the value', () => {
    expect(parseReferenceList('["RE 2026-1", "RE,2026-2"]')).toEqual(['RE 2026-1', 'RE,2026-2']);
    expect(parseReferenceList('[1001, 1002]')).toEqual(['1001', '1002']);
    expect(parseReferenceList([' INV-1 ', 'INV-2'])).toEqual(['INV-1', 'INV-2']);
  });

  it('keeps the literal text of numbers in a JSON list, which a double would round', () => {
    expect(parseReferenceList('[20260000000000000001, 1.50, "A\\"1", -7, 1E3]')).toEqual(['20260000000000000001', '1.50', 'A"1', '-7', '1E3']);
  });

  it('reads a bracketed list that is not JSON as a list', () => {
    expect(parseReferenceList('[INV-1, INV-2]')).toEqual(['INV-1', 'INV-2']);
  });

  it('refuses a JSON list of objects', () => {
    expect(() => parseReferenceList('[{"a":1}]')).toThrow();
  });
});
