import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, insertFinding, startOperatorServer } from './operator-harness.js';
import type { HttpServer } from '../../src/http/server.js';

// test/http/operator-api-refusals.test.ts holds that a note is "refused (400) or kept, never
// silently replaced" (a lone UTF-16 surrogate). A body whose note holds bytes that are not UTF-8 (a
// client sending Windows-1252: "Zahlung f\xfcr ...") is not JSON as RFC 8259 asks systems to
// exchange it: 400, and nothing acknowledged, instead of a note with U+FFFD for the bytes sent.

let db: TestDatabase;
let server: HttpServer;
let id: number;
beforeAll(async () => {
  db = await createTestDatabase('http_ack_not_utf8', { poolMax: 4 });
  server = await startOperatorServer(db);
  id = await insertFinding(db, { kind: 'missed_webhook', entity: '33333333-3333-4333-8333-333333333333' });
});
afterAll(async () => { await server?.close(); });

describe('acknowledgement whose body is not UTF-8', () => {
  it('is refused with 400 and nothing is acknowledged, instead of storing U+FFFD in place of the bytes sent', async () => {
    const body = Buffer.concat([Buffer.from('{"note":"Zahlung f'), Buffer.from([0xfc]), Buffer.from('r Rechnung 42 am Telefon best\u00e4tigt"}'.replace('\u00e4', 'a'))]);
    const answer = await call(`${server.url}/api/discrepancies/${id}/ack`, { method: 'POST', body });
    const [row] = await db.sql<{ status: string; ack_note: string | null }[]>`select status::text, ack_note from discrepancies where id = ${id}`;
    expect({ status: answer.status, stored: row }).toEqual({ status: 400, stored: { status: 'open', ack_note: null } });
  });
});
