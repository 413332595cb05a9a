import { describe, expect, it } from 'vitest';
import { addressMatcher } from '../../src/config/addresses.js';

describe('addressMatcher', () => {
  it('answers the same for an address asked again, in every spelling of it', () => {
    const matcher = addressMatcher(['10.0.0.0/8', '2001:db8::/32', '192.0.2.7']);
    for (let round = 0; round < 3; round += 1) {
      expect(matcher.has('10.1.2.3')).toBe(true);
      expect(matcher.has('::ffff:10.1.2.3')).toBe(true);
      expect(matcher.has('::FFFF:a01:203')).toBe(true);
      expect(matcher.has('11.1.2.3')).toBe(false);
      expect(matcher.has('192.0.2.7')).toBe(true);
      expect(matcher.has('192.0.2.8')).toBe(false);
      expect(matcher.has('2001:db8::1')).toBe(true);
      expect(matcher.has('2001:db9::1')).toBe(false);
      expect(matcher.has('not an address')).toBe(false);
    }
  });

  it('stays right for senders beyond what it remembers', () => {
    const matcher = addressMatcher(['10.0.0.0/16']);
    // 20,000 distinct senders: several times the answers it keeps, every answer still its own.
    for (let i = 0; i < 20_000; i += 1) {
      const inside = `10.0.${(i >> 8) & 0xff}.${i & 0xff}`;
      const outside = `10.1.${(i >> 8) & 0xff}.${i & 0xff}`;
      expect(matcher.has(inside)).toBe(true);
      expect(matcher.has(outside)).toBe(false);
    }
    expect(matcher.has('10.0.255.255')).toBe(true);
    expect(matcher.has('10.1.0.0')).toBe(false);
  });

  it('holds nothing when the list is empty', () => {
    const matcher = addressMatcher([]);
    expect(matcher.has('127.0.0.1')).toBe(false);
    expect(matcher.has('::1')).toBe(false);
  });
});
