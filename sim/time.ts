/**
 * Simulated time. Business times are integer milliseconds since the Unix epoch in simulated time;
 * event_time adds six more digits (micro- and nanoseconds) drawn from the seed so payloads carry
 * the spec's nanosecond precision and two events in one millisecond still order by text.
 */
export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

export function formatEventTime(simMs: number, subMillisecondDigits: string): string {
  const iso = new Date(simMs).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  return `${iso.slice(0, 23)}${subMillisecondDigits.padStart(6, '0').slice(0, 6)}Z`;
}

export function isoDate(simMs: number): string {
  return new Date(simMs).toISOString().slice(0, 10);
}

export function isoSeconds(simMs: number): string {
  return `${new Date(simMs).toISOString().slice(0, 19)}Z`;
}

/** Parses '90s', '15m', '6h', '7d' or plain milliseconds into milliseconds. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) return undefined;
  const value = Number(match[1]);
  const unit = match[2] ?? 'ms';
  const factor = { ms: 1, s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS }[unit as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Math.round(value * factor);
}

/**
 * The simulated clock: paused until the simulator is told to play, then sim time advances at
 * `scale` simulated ms per real ms. `jumpTo` moves it forward instantly (advance, drain).
 */
export class SimClock {
  private base: number;
  private realBase = performance.now();
  private running = false;

  constructor(
    start: number,
    readonly scale: number,
  ) {
    this.base = start;
  }

  now(): number {
    if (!this.running) return this.base;
    return this.base + Math.floor((performance.now() - this.realBase) * this.scale);
  }

  get isRunning(): boolean {
    return this.running;
  }

  resume(): void {
    if (this.running) return;
    this.realBase = performance.now();
    this.running = true;
  }

  jumpTo(simMs: number): void {
    if (simMs <= this.now()) return;
    this.base = simMs;
    this.realBase = performance.now();
  }

  /** Real milliseconds until the clock shows `simMs` (0 if it already does, Infinity if paused). */
  realDelayUntil(simMs: number): number {
    const ahead = simMs - this.now();
    if (ahead <= 0) return 0;
    return this.running ? ahead / this.scale : Number.POSITIVE_INFINITY;
  }
}
