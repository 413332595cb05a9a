import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, insertFinding, startOperatorServer } from './operator-harness.js';

let db: TestDatabase;
let server: HttpServer;
const logLines: { level: number; msg: string; [k: string]: unknown }[] = [];
const ids: number[] = [];

beforeAll(async () => {
  db = await createTestDatabase('op_operator_api');
  const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(JSON.parse(s) as (typeof logLines)[number]) });
  server = await startOperatorServer(db, {}, log);
  for (let i = 0; i < 5; i++) ids.push(await insertFinding(db, { kind: 'missed_webhook', entity: randomUUID(), ref: `R-${i}`, expected: 'confirmed' }));
});
afterAll(async () => {
  await server?.close();
});

describe('XLSX pages (http-api.md: "limit=N returns a page, and when there are more rows the Next-Cursor header holds an opaque cursor")', () => {
  it('gives the next cursor for ?format=xlsx&limit=2 as it does for JSON and CSV', async () => {
    const json = await call(`${server.url}/api/discrepancies?limit=2`);
    expect(json.headers['next-cursor']).toBeTruthy();
    const xlsx = await call(`${server.url}/api/discrepancies?format=xlsx&limit=2`);
    expect(xlsx.status).toBe(200);
    expect(xlsx.bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    // Without it the 413's advice ("page with limit") leads nowhere: the rows after the first page cannot be had as XLSX.
    expect(xlsx.headers['next-cursor'], 'XLSX page has no Next-Cursor').toBe(json.headers['next-cursor']);
  });
});

describe('env= on every /api/* endpoint (http-api.md: "env= may repeat it, any other value is 403")', () => {
  for (const path of ['/api/overview?env=production', '/api/discrepancies/ID?env=production']) {
    it(`refuses ${path} on a sandbox daemon with 403`, async () => {
      const answer = await call(`${server.url}${path.replace('ID', String(ids[0]))}`);
      expect(answer.status, answer.text.slice(0, 120)).toBe(403);
    });
  }

  it('refuses POST /api/discrepancies/ID/ack?env=production with 403 and acknowledges nothing', async () => {
    const answer = await call(`${server.url}/api/discrepancies/${ids[4]}/ack?env=production`, { method: 'POST', body: JSON.stringify({ note: 'meant for production' }) });
    const [row] = await db.sql<{ status: string }[]>`select status::text from discrepancies where id = ${ids[4]!}`;
    expect([answer.status, row!.status]).toEqual([403, 'open']);
  });
});

describe('bad filters (http-api.md: "Bad filters are 400 with the reason")', () => {
  it('answers since=0000-01-01 with 400, not 500', async () => {
    const answer = await call(`${server.url}/api/discrepancies?since=0000-01-01`);
    expect(answer.status, answer.text).toBe(400);
  });

  it('answers since=2026-02-30 (no such day) with 400 instead of reading it as 2026-03-02', async () => {
    const answer = await call(`${server.url}/api/discrepancies?since=2026-02-30`);
    expect(answer.status, `answered ${answer.status} with ${JSON.stringify(answer.text.slice(0, 60))}`).toBe(400);
  });

  it('answers ageing=maybe with 400 instead of silently serving the invoices report', async () => {
    const answer = await call(`${server.url}/api/invoices?ageing=maybe`);
    expect(answer.status, `answered ${answer.status} with ${JSON.stringify(answer.text.slice(0, 60))}`).toBe(400);
  });

  it('writes a log line naming the refused filter (brief: "a clear 4xx naming the problem and a log line")', async () => {
    logLines.length = 0;
    const answer = await call(`${server.url}/api/discrepancies?status=closed`);
    expect(answer.status).toBe(400);
    expect(logLines.map((l) => l.msg), 'no log line for a 400').not.toEqual([]);
  });
});

describe('acknowledgement note round trip', () => {
  it('stores the note it answers with: a lone UTF-16 surrogate is refused (400) or kept, never silently replaced', async () => {
    const sent = 'ok \ud800 end';
    const answer = await call(`${server.url}/api/discrepancies/${ids[1]}/ack`, { method: 'POST', body: JSON.stringify({ note: sent }) });
    if (answer.status === 400) return;
    expect(answer.status).toBe(200);
    const claimed = (JSON.parse(answer.text) as { note: string }).note;
    const report = JSON.parse((await call(`${server.url}/api/discrepancies?status=acknowledged`)).text) as { id: number; ack_note: string }[];
    const stored = report.find((r) => r.id === ids[1])!.ack_note;
    expect(claimed).toBe(sent);
    // The 200 said the note was recorded as sent; the ledger holds U+FFFD in its place.
    expect(JSON.stringify(stored), 'stored note (JSON-escaped) differs from the note the 200 claimed').toBe(JSON.stringify(claimed));
  });
});

describe('refused operator writes leave a log line naming the problem (operator-api.ts: "Each refused request is logged")', () => {
  const mentions = (needle: string) => logLines.filter((l) => l.level >= 30 && JSON.stringify(l).includes(needle));

  it('logs an acknowledgement refused for a missing note (400 "note is required")', async () => {
    logLines.length = 0;
    const answer = await call(`${server.url}/api/discrepancies/${ids[1]}/ack`, { method: 'POST', body: JSON.stringify({ note: '' }) });
    expect(answer.status).toBe(400);
    expect(mentions('note is required').map((l) => l.msg), 'no log line for the refused acknowledgement').not.toEqual([]);
  });

  it('logs an acknowledgement refused for a body that is not JSON (400)', async () => {
    logLines.length = 0;
    const answer = await call(`${server.url}/api/discrepancies/${ids[1]}/ack`, { method: 'POST', body: 'note=hello' });
    expect(answer.status).toBe(400);
    expect(mentions('JSON').map((l) => l.msg), 'no log line for the refused acknowledgement').not.toEqual([]);
  });

  it('logs an upload refused with 415 (a form instead of the file)', async () => {
    logLines.length = 0;
    const answer = await call(`${server.url}/api/statements?name=s.sta`, { method: 'POST', body: 'a=b', contentType: 'application/x-www-form-urlencoded' });
    expect(answer.status).toBe(415);
    expect(mentions('form').map((l) => l.msg), 'no log line for the refused upload').not.toEqual([]);
  });

  it('answers an acknowledgement body over its 64 KiB limit with a 413 naming the limit, not "body must be JSON"', async () => {
    const answer = await call(`${server.url}/api/discrepancies/${ids[1]}/ack`, { method: 'POST', body: JSON.stringify({ note: 'x'.repeat(70_000) }) });
    expect(answer.status).toBe(413);
    expect(answer.text).toMatch(/larger than 65536 bytes/);
  });
});
