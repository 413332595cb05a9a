import { describe, expect, it } from 'vitest';
import { amountParts, splitAmount, type AmountText } from '../../src/payout-reports/amounts.js';
import { scaled } from '../../src/payout-reports/decimal.js';
import { csvAmount } from '../../src/statements/csv-values.js';
import { csvAmountToCents } from '../../src/statements/money.js';

/**
 * Swiss amounts grouped by a typographic apostrophe (U+2019), as Windows' de-CH number format and
 * spreadsheets using it write them: read as the plain apostrophe is (docs/payout-reports.md and the
 * statement CSV rules promise apostrophes). Before, `1’234.50` was refused.
 */
describe('thousands grouped by a typographic apostrophe', () => {
  it('in a payout report amount', () => {
    const cents = (text: string) => {
      const split = splitAmount(text);
      expect(typeof split, String(split)).toBe('object');
      const parts = amountParts(split as AmountText, '.');
      expect(typeof parts, String(parts)).toBe('object');
      return scaled(parts as Exclude<typeof parts, string>, 2);
    };
    expect(cents('1’234.50')).toBe(123_450n);
    expect(cents('1’234’567.05')).toBe(123_456_705n);
    expect(cents("1'234.50")).toBe(123_450n);
    // Grouping still in threes.
    expect(amountParts(splitAmount('12’34.50') as AmountText, '.')).toBe('has thousands separators that do not group three digits');
  });

  it('in a bank CSV amount', () => {
    expect(csvAmount('1’234.50', '.', 'amount').cents).toBe(123_450n);
    expect(csvAmount('-11’373.94', 'auto', 'amount').cents).toBe(-1_137_394n);
    expect(csvAmountToCents('11’373.94')).toBe(1_137_394n);
  });
});
