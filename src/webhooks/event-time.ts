/**
 * The spec's event_time: ISO 8601 UTC with up to nine fractional digits and a Z. JavaScript Dates
 * and Postgres timestamps keep at most micro-seconds, so two events inside one microsecond would
 * tie or swap. We keep the text as sent and a normalised copy with exactly nine digits, whose
 * plain text order is time order (the year is always four digits).
 */
const EVENT_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/;

export interface EventTime {
  /** As sent. */
  readonly raw: string;
  /** `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`: compare as text. */
  readonly sortable: string;
  /** Truncated to milliseconds: for range filters and display only, never for ordering. */
  readonly date: Date;
}

/**
 * The last time read, and what it gave: classifying a delivery reads its event_time twice (the
 * payload schema's check, then the event's key and row), and each reading builds a Date and two
 * strings. Callers only read the result.
 */
let last: { raw: string; parsed: EventTime | undefined } | undefined;

export function parseEventTime(raw: string): EventTime | undefined {
  if (last?.raw === raw) return last.parsed;
  const parsed = readEventTime(raw);
  last = { raw, parsed };
  return parsed;
}

function readEventTime(raw: string): EventTime | undefined {
  const match = EVENT_TIME.exec(raw);
  if (!match) return undefined;
  const [, day, clock, fraction = ''] = match;
  const date = new Date(`${day}T${clock}.${fraction.padEnd(3, '0').slice(0, 3)}Z`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Reject calendar overflow that Date silently rolls over (2026-02-30 becomes March 2).
  if (date.toISOString().slice(0, 19) !== `${day}T${clock}`) return undefined;
  // Year 0000 is a valid Date (ISO 8601 counts 1 BC as year 0) but not a Postgres timestamptz
  // ("date/time field value out of range"), and the rules cast event_time_sortable to timestamptz:
  // stored as parsed, it failed every reconciliation pass for good. Four digits and no year 0 keep
  // every accepted time inside timestamptz's range (4713 BC to 294276 AD), nanoseconds rounded or not.
  if (day?.startsWith('0000')) return undefined;
  return { raw, sortable: `${day}T${clock}.${fraction.padEnd(9, '0')}Z`, date };
}
