import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, insertFinding, startOperatorServer } from '../http/operator-harness.js';
import type { HttpServer } from '../../src/http/server.js';
import { parseDiscrepancyQuery, parseSince } from '../../src/reports/discrepancies.js';
import { UsageError } from '../../src/config/usage-error.js';

// docs/http-api.md: "Bad filters are 400 with the reason." parseSince promises "years 0001-9999" and
// accepts a zone offset, but an offset can move the instant out of that range (0001-01-01T00:00+01:00
// is 0000-12-31T23:00Z, 9999-12-31T23:00-02:00 is 10000-01-01T01:00Z), and Postgres then fails the
// query: a 500 (and an uncaught crash for `report discrepancies --since`), not a 400.

let db: TestDatabase;
let server: HttpServer;
beforeAll(async () => {
  db = await createTestDatabase('since_range', { poolMax: 2 });
  server = await startOperatorServer(db);
  await insertFinding(db, { kind: 'missed_webhook', entity: 'e1' });
});
afterAll(async () => { await server.close(); });

describe('since moved out of years 0001-9999 by its zone offset', () => {
  for (const since of ['0001-01-01T00:00+01:00', '9999-12-31T23:00-02:00']) {
    it(`answers ${since} with 400 naming since, not 500`, async () => {
      const answer = await call(`${server.url}/api/discrepancies?since=${encodeURIComponent(since)}`);
      expect(answer.status, answer.text).toBe(400);
      expect(answer.text).toMatch(/since/);
    });
    it(`refuses ${since} as a usage error before the query runs`, () => {
      expect(() => parseDiscrepancyQuery({ since })).toThrow(UsageError);
    });
  }
  it('still accepts the first and last instants of those years, whatever zone names them', () => {
    expect(parseSince('0001-01-01T00:00Z')?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(parseSince('0001-01-01T00:00-01:00')?.toISOString()).toBe('0001-01-01T01:00:00.000Z');
    expect(parseSince('9999-12-31T23:59:59Z')?.toISOString()).toBe('9999-12-31T23:59:59.000Z');
    expect(parseSince('10000-01-01T00:00+02:00')).toBeUndefined();
  });
});
