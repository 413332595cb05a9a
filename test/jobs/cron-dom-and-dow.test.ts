import { afterEach, describe, expect, it, vi } from 'vitest';
import { startJob } from '../../src/jobs/job.js';
import { silentLogger } from '../../src/log/logger.js';

/**
 * f2ae857 swapped node-cron 4.6 for croner. node-cron matches a schedule's day of month AND its day
 * of week (node-cron 4.6 TimeMatcher.match: `runOnDay && runOnMonth && runOnWeekDay`): '0 6 1-7 * MON'
 * is 06:00 on the month's first Monday. croner 11 defaults to `domAndDow: false` (OR): the same
 * setting now runs on each of days 1-7 and on every Monday. CHANGELOG's Upgrading names only the
 * hours now read in UTC; a POLL_SCHEDULE / RECONCILE_SCHEDULE that node-cron accepted silently
 * means something else (docs/settings.md: "cron expression, in UTC").
 */
describe('a schedule naming a day of month and a day of week (node-cron read them as AND)', () => {
  afterEach(() => { vi.useRealTimers(); });

  it("'0 6 1-7 * MON' runs on the month's first Monday only, as before the croner swap", async () => {
    vi.useFakeTimers({ now: new Date('2026-12-01T00:00:00Z'), toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const ticks: string[] = [];
    const job = startJob({
      name: 'reconcile', schedule: '0 6 1-7 * MON', log: silentLogger(),
      run: async () => { ticks.push(new Date().toISOString().slice(0, 16)); },
    });
    try {
      // 2026-12-01 (a Tuesday) to 2026-12-15: the first Monday is 2026-12-07.
      for (let hour = 0; hour < 14 * 24; hour++) await vi.advanceTimersByTimeAsync(3_600_000);
    } finally {
      await job.stop();
    }
    expect(ticks, `ticks (UTC) of '0 6 1-7 * MON' from 2026-12-01 to 2026-12-15`).toEqual(['2026-12-07T06:00']);
  });
});
