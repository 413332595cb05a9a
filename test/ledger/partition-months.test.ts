import { describe, expect, it } from 'vitest';
import { addMonths, isRetired, monthOfPartition, monthStart, monthsCoveredAhead, monthsToEnsure, partitionName } from '../../src/ledger/partition-months.js';

describe('partition months', () => {
  it('names UTC months and reads the names back; other tables are no month', () => {
    const month = monthStart(new Date('2026-12-31T23:59:59.999Z'));
    expect(partitionName(month)).toBe('webhook_deliveries_p2026_12');
    expect(monthOfPartition('webhook_deliveries_p2026_12')).toEqual(month);
    expect(monthOfPartition('webhook_deliveries_default')).toBeNull();
    expect(monthOfPartition('webhook_deliveries_p2026_13')).toBeNull();
    // A time zone east of UTC is already in January there, but the month is UTC's.
    expect(partitionName(monthStart(new Date('2026-12-31T23:30:00-01:00')))).toBe('webhook_deliveries_p2027_01');
  });

  it('wants the current month and the months ahead, across a year end', () => {
    expect(monthsToEnsure(new Date('2026-11-24T05:00:00Z'), 3).map(partitionName)).toEqual([
      'webhook_deliveries_p2026_11', 'webhook_deliveries_p2026_12', 'webhook_deliveries_p2027_01', 'webhook_deliveries_p2027_02',
    ]);
  });

  it('retires a month only when it starts before the current month minus the retention; never without one', () => {
    const now = new Date('2026-11-24T05:00:00Z');
    expect(isRetired(new Date('2025-10-01T00:00:00Z'), now, 12)).toBe(true);
    expect(isRetired(new Date('2025-11-01T00:00:00Z'), now, 12)).toBe(false);
    expect(isRetired(addMonths(monthStart(now), -1), now, 1)).toBe(false);
    expect(isRetired(addMonths(monthStart(now), -2), now, 1)).toBe(true);
    expect(isRetired(new Date('2000-01-01T00:00:00Z'), now, undefined)).toBe(false);
  });

  it('counts the months covered ahead up to the first gap, across a year end; -1 without the current month', () => {
    const now = new Date('2026-11-24T05:00:00Z');
    const names = (...months: string[]) => months.map((m) => `webhook_deliveries_p${m}`);
    expect(monthsCoveredAhead(now, [...names('2026_10', '2026_11', '2026_12', '2027_01', '2027_02'), 'webhook_deliveries_default'])).toBe(3);
    expect(monthsCoveredAhead(now, names('2026_11', '2026_12', '2027_02'))).toBe(1);
    expect(monthsCoveredAhead(now, names('2026_11'))).toBe(0);
    expect(monthsCoveredAhead(now, names('2026_12', '2027_01'))).toBe(-1);
  });
});
