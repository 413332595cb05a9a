import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { sleep } from '../helpers/wait.js';
import { startOperatorServer, TOKEN } from './operator-harness.js';

/**
 * http-api.md: an /api answer is 503 when the ledger does not answer within the deadline "before
 * the answer begins"; a streamed report is cut off only when its ledger fails midway or its client
 * took no byte of it for 30 s. The bound that frees a read's connection at the deadline must not
 * reach a download that has begun: with statement_timeout it did, as postgres.js sends a cursor's
 * Executes without Sync and Postgres times the whole cursor as one statement (ledger-read.ts), so
 * a report read for longer than the deadline was cut off ("canceling statement due to statement
 * timeout"). Here the deadline is 2 s (the hook of operatorRoutes; 15 s in the daemon) and the
 * client pauses twice as long, well under the 30 s stall limit, with megabytes still to come.
 */
const DEADLINE_MS = 2000;
const PAUSE_MS = 2 * DEADLINE_MS;
const ROWS = 40_000;

let db: TestDatabase;
let server: HttpServer;
const logLines: { level: number; msg: string; [k: string]: unknown }[] = [];

beforeAll(async () => {
  db = await createTestDatabase('op_long_report');
  const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(JSON.parse(s) as (typeof logLines)[number]) });
  server = await startOperatorServer(db, {}, log, { ledgerDeadlineMs: DEADLINE_MS });
  // About 8 MB of CSV: far more than the sockets' buffers hold while the client pauses.
  await db.sql`
    insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, external_reference_id, expected, observed, details, first_detected_at)
    select 'sandbox', 'missed_webhook', 'open', 'order', gen_random_uuid()::text, '', 'REF-' || g, 'confirmed', null,
           'A sentence long enough to make the report a few megabytes, as a real finding''s sentence is: ' || repeat('x', 120), now()
    from generate_series(1, ${ROWS}) g`;
});
afterAll(async () => {
  await server?.close();
});

describe('a streamed report read for longer than the ledger deadline', () => {
  it('arrives whole when its client keeps reading, pausing past the deadline but under the stall limit', { timeout: 60_000 }, async () => {
    const started = performance.now();
    const response = await request(`${server.url}/api/discrepancies?format=csv`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.statusCode).toBe(200);
    const chunks: Buffer[] = [];
    let failure: unknown = null;
    let first = true;
    try {
      for await (const chunk of response.body) {
        chunks.push(chunk as Buffer);
        if (first) {
          first = false;
          // A client busy elsewhere, or a slow line.
          await sleep(PAUSE_MS);
        }
      }
    } catch (error) {
      failure = error;
    }
    const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter((l) => l.length > 0);
    expect({ failure: failure === null ? null : String((failure as Error).message ?? failure), lines: lines.length }).toEqual({ failure: null, lines: ROWS + 1 });
    expect(performance.now() - started).toBeGreaterThan(PAUSE_MS);
    expect(lines.at(-1)).toContain(`REF-${ROWS}`);
    expect(logLines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([]);
  });
});
