import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseDiscrepancyQuery, sinceMicros, streamDiscrepancies } from '../../src/reports/discrepancies.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * `--since` keeps "only discrepancies first detected at or after this instant" (report --help,
 * docs/commands.md: "a timestamp"). first_detected_at is stored to the microsecond and parseSince
 * accepts up to nine fractional digits, so an instant of .123456 must not be read as .123.
 */
let db: TestDatabase;
useTestDatabase('since_micros', (d) => (db = d));

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _e: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

beforeAll(async () => {
  for (const [entity, at] of [['before', '2026-03-01T10:00:00.123200Z'], ['after', '2026-03-01T10:00:00.123500Z']] as const) {
    await db.sql`
      insert into discrepancies (environment, kind, entity_type, entity_id, details, first_detected_at, last_checked_at)
      values ('sandbox', 'missed_webhook', 'order', ${entity}, 'test', ${at}::timestamptz, ${at}::timestamptz)`;
  }
});

describe('report discrepancies --since with sub-millisecond digits', () => {
  it('leaves out a finding detected before the instant given', async () => {
    const { filters } = parseDiscrepancyQuery({ since: '2026-03-01T10:00:00.123456Z', status: 'all', format: 'json' });
    const out = new Collect();
    await streamDiscrepancies(db, filters, 'json', out);
    const ids = (JSON.parse(out.text) as { entity_id: string }[]).map((r) => r.entity_id);
    // 10:00:00.1232 is before 10:00:00.123456: not "at or after" it.
    expect(ids).toEqual(['after']);
  });
});

describe('sinceMicros', () => {
  it('keeps the microseconds, rounds digits past them up, and reads offsets and dates', () => {
    expect(sinceMicros('2026-03-01T10:00:00.123456Z')).toBe('2026-03-01T10:00:00.123456Z');
    expect(sinceMicros('2026-03-01T10:00:00.1234561Z')).toBe('2026-03-01T10:00:00.123457Z');
    expect(sinceMicros('2026-03-01T10:00:00.999999999Z')).toBe('2026-03-01T10:00:01.000000Z');
    expect(sinceMicros('2026-03-01T10:00:00.5+01:00')).toBe('2026-03-01T09:00:00.500000Z');
    expect(sinceMicros('2026-03-01')).toBe('2026-03-01T00:00:00.000000Z');
    expect(sinceMicros('0001-01-01T00:00:00.000001Z')).toBe('0001-01-01T00:00:00.000001Z');
    expect(sinceMicros('2026-02-30')).toBeUndefined();
  });
});
