import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, startOperatorServer } from '../http/operator-harness.js';
import { sinceMicros } from '../../src/reports/discrepancies.js';

/**
 * reports/discrepancies.ts parseSince: an instant outside years 0001-9999 is refused "instead of"
 * the query failing (HTTP 500). sinceMicros (this batch) rounds digits past the microsecond up, and
 * the last instant of year 9999 rounds into year 10000: toISOString writes "+010000-…", which
 * Postgres refuses, and GET /api/discrepancies?since= answers 500 on a value parseSince accepted.
 */
let db: TestDatabase;
let server: HttpServer;
beforeAll(async () => {
  db = await createTestDatabase('since_last_instant');
  server = await startOperatorServer(db);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('--since at the very end of year 9999, below the microsecond', () => {
  it('sinceMicros gives text Postgres reads (a year of four digits), or refuses it', () => {
    const text = sinceMicros('9999-12-31T23:59:59.9999999Z');
    if (text !== undefined) expect(text).toMatch(/^\d{4}-/);
  });

  it('GET /api/discrepancies?since= answers 200 (nothing is that late) or 400, never 500', async () => {
    const answer = await call(`${server.url}/api/discrepancies?since=${encodeURIComponent('9999-12-31T23:59:59.9999999Z')}`);
    expect([200, 400], answer.text.slice(0, 300)).toContain(answer.status);
  });
});
