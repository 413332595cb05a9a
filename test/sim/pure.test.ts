import { describe, expect, it } from 'vitest';
import { formatCents, mulDivRound } from '../../sim/money.js';
import { invoiceDeductions, mdrMicros, parseContractTerms } from '../../sim/contract.js';
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

  it('rounds fees half away from zero and puts VAT on the discount and the fixed fee', () => {
    expect(mulDivRound(10n, 1n, 4n)).toBe(3n); // 2.5 -> 3
    expect(mulDivRound(9n, 1n, 4n)).toBe(2n); // 2.25 -> 2
    // 100.00 at 2.5 %: discount 2.50; VAT 19 % of 2.50 = 0.475 -> 0.48
    expect(invoiceDeductions(100_00n, 25_000, 0n, 190_000)).toEqual({ rateMicros: 25_000, discountCents: 250n, transactionFeeCents: 0n, vatCents: 48n, totalDeductionsCents: 298n, transferCents: 9702n });
    // 123.45 at 2.9 %: 3.58005 -> 3.58; with a 0.30 fixed fee VAT 19 % of 3.88 = 0.7372 -> 0.74
    expect(invoiceDeductions(123_45n, 29_000, 30n, 190_000)).toEqual({ rateMicros: 29_000, discountCents: 358n, transactionFeeCents: 30n, vatCents: 74n, totalDeductionsCents: 462n, transferCents: 11883n });
    // 50.50 at 3 %: 1.515 -> 1.52 (half away from zero)
    expect(invoiceDeductions(50_50n, 30_000, 0n, 0).discountCents).toBe(152n);
  });
});

describe('contract terms', () => {
  it('reads the CONTRACT_TERMS shape and picks the most specific MDR entry', () => {
    const terms = parseContractTerms(undefined);
    expect(terms).toMatchObject({ currency: 'EUR', fixed_fee_cents: 30, vat_percent: 190_000 });
    expect(mdrMicros(terms, 'bank_transfer', 30)).toBe(25_000);
    expect(mdrMicros(terms, 'bank_transfer', 14)).toBe(29_000);
    expect(mdrMicros(terms, 'direct_debit', 30)).toBe(30_000);
    const numbers = parseContractTerms({ mdr: [{ payment_method: 'direct_debit', percent: 1.25 }, { percent: '2.1234' }], fixed_fee_cents: 0, vat_percent: 20 });
    expect(mdrMicros(numbers, 'direct_debit', 7)).toBe(12_500);
    expect(mdrMicros(numbers, 'bank_transfer', 7)).toBe(21_234);
    expect(mdrMicros(parseContractTerms({ mdr: [{ payment_method: 'bank_transfer', percent: '2' }], fixed_fee_cents: 0, vat_percent: '0' }), 'direct_debit', 7)).toBe(0);
  });

  it('refuses terms naming the field at fault', () => {
    expect(() => parseContractTerms({ mdr: [{ percent: '101' }], fixed_fee_cents: 30, vat_percent: '19' })).toThrow(/mdr\.0\.percent: expected a percent/);
    expect(() => parseContractTerms({ mdr: [{ percent: '2.12345' }], fixed_fee_cents: 30, vat_percent: '19' })).toThrow(/mdr\.0\.percent/);
    expect(() => parseContractTerms({ mdr: [], fixed_fee_cents: 30, vat_percent: '19' })).toThrow(/mdr/);
    expect(() => parseContractTerms({ mdr: [{ percent: 2 }], fixed_fee_cents: -1, vat_percent: '19' })).toThrow(/fixed_fee_cents/);
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

  // ops/scenarios/README.md: "`demo.json`: every fault, a simulated day per real minute".
  it('demo.json sets every fault the simulator has to a rate above zero', async () => {
    const { loadScenario, DEFAULT_FAULT_RATES } = await import('../../sim/options.js');
    const scenario = await loadScenario('ops/scenarios/demo.json');
    const missing = Object.keys(DEFAULT_FAULT_RATES).filter((name) => !((scenario.faults ?? {})[name as keyof typeof DEFAULT_FAULT_RATES]! > 0));
    expect(missing).toEqual([]);
  });
});
