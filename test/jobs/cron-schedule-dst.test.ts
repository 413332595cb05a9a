import { afterEach, describe, expect, it, vi } from 'vitest';
import { startJob } from '../../src/jobs/job.js';
import { silentLogger } from '../../src/log/logger.js';

/**
 * POLL_SCHEDULE and RECONCILE_SCHEDULE (default every 5 minutes) go to node-cron (src/jobs/job.ts),
 * which reads the process's local time zone: the host's /etc/localtime under the systemd unit,
 * Europe/Berlin on a German server (docs/settings.md says only "cron expression"). node-cron 4.6's
 * heartbeat takes "now" as `new Date(); date.setMilliseconds(0)`: inside the repeated hour of the
 * autumn change (2026-10-25, 01:00Z-02:00Z, 02:00-03:00 CET) setMilliseconds re-reads the local
 * wall clock at its first (CEST) occurrence, an hour earlier, so the due slot never looks due: the
 * heartbeat re-arms itself with a 0 ms timer over and over (a busy loop for the whole hour) and
 * runs nothing until 02:00Z. With the default schedule no poll and no reconciliation pass ran
 * from 00:00Z to 02:00Z: BnplReconPollStale (last complete poll over 3600 s old for 10 m) pages
 * the SRE at about 03:05 local time. node-cron's `timezone: 'UTC'` option does not avoid it (its
 * "now" is still read through the local zone); a process in UTC does.
 */
describe('a */5 schedule on the night the clocks go back', () => {
  const zone = process.env['TZ'];
  afterEach(() => {
    vi.useRealTimers();
    if (zone === undefined) delete process.env['TZ'];
    else process.env['TZ'] = zone;
  });

  it('keeps ticking every 5 minutes through the repeated hour (process time zone Europe/Berlin)', async () => {
    process.env['TZ'] = 'Europe/Berlin';
    vi.useFakeTimers({ now: new Date('2026-10-25T00:01:00Z'), toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const ticks: string[] = [];
    const job = startJob({
      name: 'poll', schedule: '*/5 * * * *', log: silentLogger(),
      run: async () => {
        ticks.push(new Date().toISOString().slice(11, 16));
      },
    });
    try {
      // 00:01Z (02:01 CEST) to 01:16Z (02:16 CET): 75 minutes, a tick due at 00:05Z, 00:10Z, ... 01:15Z.
      // (Not further: the busy loop costs fake timers a million callbacks per 17 minutes.)
      for (let minute = 0; minute < 75; minute++) await vi.advanceTimersByTimeAsync(60_000);
    } finally {
      await job.stop();
    }
    // The window's bounds (00:00Z, the tick before the start, and 01:20Z, the first after the end)
    // count as ticks, so a gap at either end counts too.
    const bounded = ['00:00', ...ticks, '01:20'];
    const gaps: string[] = [];
    for (let i = 1; i < bounded.length; i++) {
      const [h0, m0] = bounded[i - 1]!.split(':').map(Number);
      const [h1, m1] = bounded[i]!.split(':').map(Number);
      const gap = h1! * 60 + m1! - (h0! * 60 + m0!);
      if (gap > 5) gaps.push(`${bounded[i - 1]}Z -> ${bounded[i]}Z (${gap} min without a tick)`);
    }
    expect(gaps, `ticks (UTC): ${ticks.join(' ')}`).toEqual([]);
  });
});
