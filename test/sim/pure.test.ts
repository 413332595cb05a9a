import { describe, expect, it } from 'vitest';
import { formatCents, feeWithVat, mulDivRound } from '../../sim/money.js';
import { ibanWithCheck } from '../../sim/parties.js';
import { Prng } from '../../sim/prng.js';
import { SlidingWindowLimiter } from '../../sim/rate-limit.js';
import { subscriptionMatches } from '../../sim/topics.js';
import { formatEventTime, parseDuration } from '../../sim/time.js';
import { validateFaults } from '../../sim/options.js';

describe('seeded PRNG', () => {
  it('repeats a stream for a seed and differs between seeds', () => {
    const draw = (seed: string) => {
      const rng = new Prng(seed);
      return [rng.uuid(), rng.int(0, 1_000_000), rng.hex(8), rng.digits(6)];
    };
    expect(draw('42')).toEqual(draw('42'));
    expect(draw('42')).not.toEqual(draw('43'));
  });

  it('draws version-4 UUIDs and stays within int bounds', () => {
    const rng = new Prng('uuid');
    for (let i = 0; i < 200; i++) {
      expect(rng.uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const n = rng.int(3, 5);
      expect(n >= 3 && n <= 5).toBe(true);
    }
  });
});

describe('money', () => {
  it('formats cents by integer arithmetic', () => {
    expect(formatCents(0n)).toBe('0.00');
    expect(formatCents(5n)).toBe('0.05');
    expect(formatCents(123456789012345678n)).toBe('1234567890123456.78');
    expect(formatCents(-1514n)).toBe('-15.14');
    expect(formatCents(100n, ',')).toBe('1,00');
  });

  it('rounds fees half up and puts VAT on the fee', () => {
    expect(mulDivRound(10n, 1n, 4n)).toBe(3n); // 2.5 -> 3
    expect(mulDivRound(9n, 1n, 4n)).toBe(2n); // 2.25 -> 2
    expect(feeWithVat(100_00n, 250, 19)).toEqual({ fee: 250n, vat: 48n }); // 2.50 fee, 0.475 VAT -> 0.48
  });
});

describe('helpers', () => {
  it('computes IBAN check digits (ISO 7064 mod 97)', () => {
    expect(ibanWithCheck('DE', '370400440532013000')).toBe('DE89370400440532013000');
  });

  it('applies bare-topic and subtopic subscriptions as the spec says', () => {
    expect(subscriptionMatches('order', 'order/confirmed')).toBe(true);
    expect(subscriptionMatches('order/confirmed', 'order/confirmed')).toBe(true);
    expect(subscriptionMatches('order/confirmed', 'order/pending')).toBe(false);
    expect(subscriptionMatches('order', 'invoice/created')).toBe(false);
    expect(subscriptionMatches('kyc', 'kyc/accepted')).toBe(true);
  });

  it('formats event_time with nine fractional digits and Z', () => {
    expect(formatEventTime(Date.UTC(2026, 0, 5, 10, 0, 0, 7), '123456')).toBe('2026-01-05T10:00:00.007123456Z');
    expect(parseDuration('7d')).toBe(7 * 86_400_000);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('soon')).toBeUndefined();
  });

  it('rejects fault rates that sum above one or have unknown names', () => {
    expect(() => validateFaults({ neverDelivered: 0.6, repeated: 0.6 })).toThrow(/sum to at most 1/);
    expect(() => validateFaults({ bogus: 0.1 } as never)).toThrow();
    expect(validateFaults({ repeated: 0.2 }).repeated).toBe(0.2);
  });
});

describe('sliding-window rate limit', () => {
  it('allows exactly the limit in any one second, per key', () => {
    let now = 0;
    const limiter = new SlidingWindowLimiter(500, () => now);
    for (let i = 0; i < 500; i++) expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBeGreaterThan(0);
    expect(limiter.take('b')).toBe(0);
    now = 999;
    expect(limiter.take('a')).toBeGreaterThan(0);
    now = 1000;
    expect(limiter.take('a')).toBe(0);
  });

  it('never refuses a steady rate below the limit', () => {
    let now = 0;
    const limiter = new SlidingWindowLimiter(500, () => now);
    let refused = 0;
    for (let i = 0; i < 5000; i++) {
      now += 2.01; // ~497 per second
      if (limiter.take('steady') > 0) refused += 1;
    }
    expect(refused).toBe(0);
  });

  it('refuses the excess of a steady rate above the limit', () => {
    let now = 0;
    const limiter = new SlidingWindowLimiter(500, () => now);
    let accepted = 0;
    for (let i = 0; i < 6000; i++) {
      now += 1; // 1000 per second for 6 s
      if (limiter.take('fast') === 0) accepted += 1;
    }
    expect(accepted).toBeLessThanOrEqual(500 * 6);
    expect(accepted).toBeGreaterThanOrEqual(500 * 5);
  });
});

describe('scenario files', () => {
  it('every example under ops/scenarios loads and validates', async () => {
    const { readdir } = await import('node:fs/promises');
    const { loadScenario } = await import('../../sim/options.js');
    const files = (await readdir('ops/scenarios')).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const f of files) {
      const scenario = await loadScenario(`ops/scenarios/${f}`);
      expect(() => validateFaults(scenario.faults ?? {})).not.toThrow();
    }
  });
});
