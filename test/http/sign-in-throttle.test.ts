import { describe, expect, it } from 'vitest';
import { addressMatcher, clientAddress, forwardedHop, senderKey } from '../../src/config/addresses.js';
import { SIGN_IN_MAX_FAILURES, SignInThrottle } from '../../src/http/sign-in.js';

/**
 * http-api.md: "429 with Retry-After for an address ... that sent 10 wrong tokens within a minute".
 * A fixed window from the first wrong token let an address send 2 x 10 - 1 within a second across
 * the window's boundary; the window slides.
 */
describe('sign-in throttle', () => {
  it('refuses an address once it sent 10 wrong tokens within any minute, also across the minute of its first', () => {
    let now = 0;
    const throttle = new SignInThrottle(() => now);
    const source = '203.0.113.7';
    throttle.failed(source); // t = 0 s
    now = 59_500;
    for (let i = 0; i < SIGN_IN_MAX_FAILURES - 1; i++) throttle.failed(source); // 9 more at 59.5 s: refused for 0.5 s
    expect(throttle.retryAfterSeconds(source)).toBe(1);
    now = 60_100;
    // Within the last minute (0.1 s .. 60.1 s) this address sent 9 wrong tokens; one more makes 10.
    let accepted = 0;
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) {
      if (throttle.retryAfterSeconds(source) !== undefined) break;
      throttle.failed(source);
      accepted += 1;
    }
    expect({ wrongTokensCheckedWithinOneSecond: 9 + accepted }).toEqual({ wrongTokensCheckedWithinOneSecond: SIGN_IN_MAX_FAILURES });
    // Refused until the first of those 10 (at 59.5 s) is a minute old.
    expect(throttle.retryAfterSeconds(source)).toBe(60);
    now = 119_500;
    expect(throttle.retryAfterSeconds(source)).toBeUndefined();
  });

  it('lets an address that sends a wrong token now and then go on: 9 within any minute are never refused', () => {
    let now = 0;
    const throttle = new SignInThrottle(() => now);
    for (let i = 0; i < 100; i++) {
      expect(throttle.retryAfterSeconds('198.51.100.1'), `at ${now} ms`).toBeUndefined();
      throttle.failed('198.51.100.1');
      now += 6_700; // 9 within a minute
    }
  });
});

describe('who the throttle counts', () => {
  it('an IPv4 address itself, an IPv6 address by its /64, in any of its spellings', () => {
    expect(senderKey('203.0.113.7')).toBe('203.0.113.7');
    expect(senderKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(senderKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(senderKey('2001:0DB8:0001:0002:ffff:0:0:1')).toBe('2001:db8:1:2::/64');
    expect(senderKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(senderKey('::1')).toBe('0:0:0:0::/64');
    expect(senderKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(senderKey('unknown')).toBe('unknown');
  });

  it('an X-Forwarded-For entry without the port or brackets a proxy added', () => {
    expect(forwardedHop(' 203.0.113.7:51234 ')).toBe('203.0.113.7');
    expect(forwardedHop('[2001:db8::7]:443')).toBe('2001:db8::7');
    expect(forwardedHop('[2001:db8::7]')).toBe('2001:db8::7');
    expect(forwardedHop('fe80::1%eth0')).toBe('fe80::1');
    expect(forwardedHop('2001:db8::7')).toBe('2001:db8::7');
    expect(forwardedHop('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(forwardedHop('not-an-address')).toBe('not-an-address');
    const proxies = addressMatcher(['10.0.0.0/8']);
    expect(clientAddress('10.0.0.1', '198.51.100.9:40000, 10.1.1.1:8080', proxies)).toBe('198.51.100.9');
  });
});
