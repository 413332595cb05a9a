/**
 * Times relative to when a test file starts (T0 = now), for passes that run on the real clock moved
 * forward: statements, payout reports and the receiver stamp rows with the database's clock, so a
 * pass's clock must stay near it (a full pass comes every 24 h).
 */
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export function realClock(t0 = Date.now()) {
  return {
    /** T0 + ms, as the pass's clock */
    at: (ms: number) => new Date(t0 + ms),
    /** T0 + ms as a provider event_time (nine fractional digits) */
    iso: (ms: number) => new Date(t0 + ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z'),
    /** the UTC day of T0 + ms */
    day: (ms: number) => new Date(t0 + ms).toISOString().slice(0, 10),
  };
}
