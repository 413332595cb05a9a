import { describe, expect, it } from 'vitest';
import { parseSince } from '../../src/reports/discrepancies.js';

// The page's own module (web/ is plain JavaScript with no build step), under Node's full ICU.
interface PageFormat {
  setTimeZone(zone: string): void;
  startOfDay(day: string): string;
}
const { setTimeZone, startOfDay } = (await import(new URL('../../web/format.js', import.meta.url).href)) as PageFormat;

function inZone(zone: string, day: string): string {
  setTimeZone(zone);
  try {
    return startOfDay(day);
  } finally {
    setTimeZone('UTC');
  }
}

describe('startOfDay: a picked day as the first instant of that day in the display zone (docs/page.md)', () => {
  it.each([
    ['Europe/Berlin', '2026-12-01', '2026-12-01T00:00:00+01:00'],
    ['Europe/Berlin', '2026-07-01', '2026-07-01T00:00:00+02:00'],
    // Berlin's clocks change at 02:00 and 03:00: both days still begin at midnight, at the old offset.
    ['Europe/Berlin', '2026-03-29', '2026-03-29T00:00:00+01:00'],
    ['Europe/Berlin', '2026-10-25', '2026-10-25T00:00:00+02:00'],
    ['UTC', '2026-12-01', '2026-12-01T00:00:00+00:00'],
    ['Asia/Kolkata', '2026-01-01', '2026-01-01T00:00:00+05:30'],
    ['America/New_York', '2028-02-29', '2028-02-29T00:00:00-05:00'],
    // Chile sets its clocks forward at midnight: 00:00 does not exist, the day begins at 01:00 -03:00.
    ['America/Santiago', '2026-09-06', '2026-09-06T01:00:00-03:00'],
  ])('%s %s begins at %s', (zone, day, expected) => {
    expect(inZone(zone, day)).toBe(expected);
  });

  it('gives the API a form it accepts, for the same instant', () => {
    const sent = inZone('Europe/Berlin', '2026-12-01');
    expect(parseSince(sent)?.toISOString()).toBe('2026-11-30T23:00:00.000Z');
    // Before 1893 Berlin kept local mean time (+00:53:28), which ±HH:MM cannot write: sent in UTC.
    const old = inZone('Europe/Berlin', '1890-01-01');
    expect(parseSince(old)?.toISOString()).toBe('1889-12-31T23:06:32.000Z');
  });

  it('gives nothing for what is not a calendar day', () => {
    expect(inZone('Europe/Berlin', '2026-02-30')).toBe('');
    expect(inZone('Europe/Berlin', '')).toBe('');
    expect(inZone('Europe/Berlin', '1.12.2026')).toBe('');
  });
});
