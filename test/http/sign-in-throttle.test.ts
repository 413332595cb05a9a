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

// CHANGELOG / docs/settings.md: "An `X-Forwarded-For` entry with a port or brackets ... is read as its address,
// for the throttle and for `WEBHOOK_ALLOWED_IPS` alike." A dual-stack proxy writes an IPv4 client as
// "::ffff:203.0.113.7" and, with its port, "::ffff:203.0.113.7:51234" (no brackets needed: a dotted quad
// followed by ":port" is no IPv6 address).
describe('X-Forwarded-For: an IPv4-mapped IPv6 entry with a port', () => {
  it('is read as its IPv4 address', () => {
    expect(forwardedHop('::ffff:203.0.113.7:51234')).toBe('203.0.113.7');
  });

  it('passes WEBHOOK_ALLOWED_IPS through a trusted proxy, and a trusted proxy written so is skipped', () => {
    const proxies = addressMatcher(['10.0.0.0/8']);
    const allowed = addressMatcher(['203.0.113.7']);
    expect(allowed.has(clientAddress('10.0.0.1', '::ffff:203.0.113.7:51234', proxies)!)).toBe(true);
    expect(clientAddress('10.0.0.1', '203.0.113.7:40000, ::ffff:10.1.1.1:8080', proxies)).toBe('203.0.113.7');
  });
});

// sign-in-throttle.test.ts: "an IPv4 address itself, an IPv6 address by its /64, in any of its spellings".
// Every IPv4-mapped address not spelt "::ffff:a.b.c.d" in lower case falls into the one key "0:0:0:0::/64":
// one guesser's 10 wrong tokens then refuse every other IPv4 operator behind that proxy.
describe('sign-in throttle key of IPv4-mapped IPv6 addresses', () => {
  it('is the IPv4 address whatever the spelling', () => {
    expect(senderKey('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(senderKey('::ffff:cb00:7107')).toBe('203.0.113.7');
    expect(senderKey('0:0:0:0:0:ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('does not refuse one IPv4 operator for another\'s wrong tokens', () => {
    const throttle = new SignInThrottle(() => 0);
    const guesser = senderKey('::ffff:cb00:7107'); // 203.0.113.7
    const operator = senderKey('::ffff:c633:6401'); // 198.51.100.1
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) throttle.failed(guesser);
    expect(throttle.retryAfterSeconds(operator)).toBeUndefined();
  });
});
