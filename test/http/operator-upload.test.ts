import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { request as rawRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { MAX_UPLOADS_AT_ONCE, uploadName } from '../../src/http/operator-upload.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { mt940Statement, payoutEvent } from '../statements/fixtures.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The operator API's uploads (src/http/operator-upload.ts) over loopback HTTP against a real
 * Postgres: statements go through the daemon's import in a child process (DATABASE_URL is set, as
 * in a daemon), payout reports through the payout report import, as the inboxes do.
 */
const ALICE = 'alice-2e9a6b8f9ae100b959a57a8973c90c31';
let database: TestDatabase;
let server: HttpServer;
let small: HttpServer;
let disabled: HttpServer;
let uploadsDir = '';
/** The uploads' temporary folders still there (tsx keeps its cache beside them). */
const uploads = async () => (await readdir(uploadsDir)).filter((f) => f.startsWith('bnpl-recon-upload-'));
const logLines: { level: number; msg: string; reason?: string; file?: string; operator?: string }[] = [];

const mt940 = mt940Statement;
const BALANCED = mt940('11', [{ dc: 'C', cents: 5_562_931n, ref: 'U1' }, { dc: 'D', cents: 123_400n, ref: 'U2' }], 100_000n + 5_562_931n - 123_400n);
// 150 short of opening + bookings: the import refuses it unless STATEMENT_ACCEPT_UNBALANCED.
const UNBALANCED = mt940('12', [{ dc: 'C', cents: 1_000n, ref: 'U3' }, { dc: 'D', cents: 200n, ref: 'U4' }], 100_000n + 800n - 150n);

const HEADER = 'Order No;Doc No;Doc Type;Transaction Amount;Discount %;MDR %;Transaction Fee;Gross Purchase Price;Discount;VAT on Discount;Transfer Amount;Total Deductions';
const report = (doc: string) => Buffer.from(`${HEADER}\r\nORD-1;${doc};Invoice;1.234,56 €;2,5 %;2,5;0,30 €;1.234,56 €;30,86 €;5,92 €;1.197,48 €;37,08 €\r\n`);

interface Answer { status: number; body: Record<string, unknown>; headers: Record<string, unknown> }

async function upload(base: string, path: string, body: Buffer | Readable, options: { token?: string | null; name?: string; type?: string; query?: string } = {}): Promise<Answer> {
  const token = options.token === undefined ? ALICE : options.token;
  const query = new URLSearchParams(options.query ?? '');
  if (options.name !== undefined) query.set('name', options.name);
  const response = await request(`${base}${path}?${query}`, {
    method: 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': options.type ?? 'application/octet-stream' },
    body,
  });
  const text = await response.body.text();
  return { status: response.statusCode, body: JSON.parse(text) as Record<string, unknown>, headers: response.headers };
}

const counts = async () =>
  (await database.sql<{ statements: number; lines: number; reports: number; rows: number }[]>`
    select (select count(*)::int from bank_statements) as statements, (select count(*)::int from statement_lines) as lines,
           (select count(*)::int from payout_reports) as reports, (select count(*)::int from payout_report_rows) as rows`)[0]!;

beforeAll(async () => {
  // This file's own temporary folder (os.tmpdir() reads TMPDIR; each test file runs in a process of
  // its own), so the tests can see that every upload's temporary file is gone after its answer.
  uploadsDir = await mkdtemp(path.join(tmpdir(), 'operator-upload-test-'));
  process.env.TMPDIR = uploadsDir;
  database = await createTestDatabase('operator_upload');
  const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(JSON.parse(s) as (typeof logLines)[number]) });
  const base = { DATABASE_URL: database.url, OPERATOR_TOKENS: `alice:${ALICE}`, PROVIDER_ENV: 'sandbox' };
  server = await startHttpServer({ host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test', routes: operatorRoutes({ config: loadConfig(base), database, log }) });
  small = await startHttpServer({
    host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test',
    routes: operatorRoutes({ config: loadConfig({ ...base, OPERATOR_UPLOAD_MAX_BYTES: '2048', STATEMENT_ACCEPT_UNBALANCED: 'true' }), database, log: silentLogger() }),
  });
  disabled = await startHttpServer({ host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test', routes: operatorRoutes({ config: loadConfig({ DATABASE_URL: database.url }), database, log: silentLogger() }) });
});

afterAll(async () => {
  await Promise.all([server?.close(), small?.close(), disabled?.close()]);
  if (uploadsDir) await rm(uploadsDir, { recursive: true, force: true });
});

describe('uploading a bank statement', () => {
  it('imports it as the inbox does: 201 with the command\'s result line and totals, its lines stored and adding up; 200 when uploaded again', async () => {
    const answer = await upload(server.url, '/api/statements', BALANCED, { name: 'C:\\Users\\ada\\Kontoauszug März.sta' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({
      kind: 'statement', file: 'Kontoauszug März.sta', format: 'mt940', already_imported: false, statements: 1,
      lines_read: 2, lines_new: 2, lines_known: 0, lines_overlap: 0, balances_checked: 1, balances_unchecked: 0, statements_unbalanced: 0,
      unbalanced_findings: [], totals: [{ currency: 'EUR', credit_cents: '5562931', debit_cents: '123400' }],
      result: 'Kontoauszug März.sta: format mt940, statements 1, lines read 2, lines new 2, already known 0, known from overlapping statements 0',
    });
    const id = answer.body.statement_id as number;
    const [stored] = await database.sql<{ file_name: string; line_count: number }[]>`select file_name, line_count from bank_statements where id = ${id}`;
    expect(stored).toEqual({ file_name: 'Kontoauszug März.sta', line_count: 2 });
    const sums = await database.sql<{ direction: string; cents: string; n: number }[]>`
      select direction::text, sum(amount_cents)::text as cents, count(*)::int as n from statement_lines where statement_id = ${id} group by direction order by direction`;
    expect(sums).toEqual([{ direction: 'credit', cents: '5562931', n: 1 }, { direction: 'debit', cents: '123400', n: 1 }]);
    // Opening 1,000.00 + the stored lines = the file's closing balance.
    expect(100_000n + BigInt(sums[0]!.cents) - BigInt(sums[1]!.cents)).toBe(5_539_531n);
    expect(logLines.some((l) => l.msg === 'statement uploaded' && l.operator === 'alice' && l.file === 'Kontoauszug März.sta')).toBe(true);

    const again = await upload(server.url, '/api/statements', BALANCED, { name: 'again.sta' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ statement_id: id, already_imported: true, lines_new: 0, lines_known: 2, totals: null });
    expect(again.body.result).toMatch(/ \(file already imported\)$/);
  });

  it('answers a refused file 422 with the import\'s own reason, logs it, and stores nothing', async () => {
    const before = await counts();
    const unbalanced = await upload(server.url, '/api/statements', UNBALANCED, { name: 'unbalanced.sta' });
    expect(unbalanced.status).toBe(422);
    expect(unbalanced.body.error).toMatch(/does not balance: .*\(difference -1\.50\)$/);
    const junk = await upload(server.url, '/api/statements', Buffer.from('not a statement\n'), { name: 'notes.txt' });
    expect(junk).toMatchObject({ status: 422, body: { error: 'unknown format: neither CAMT.053 XML, MT940 nor a CSV with booking date and amount columns' } });
    const empty = await upload(server.url, '/api/statements', Buffer.alloc(0));
    expect(empty.status).toBe(422);
    expect(await counts()).toEqual(before);
    expect(await uploads()).toEqual([]);
    const refusals = logLines.filter((l) => l.msg.startsWith('statement upload refused'));
    expect(refusals.map((l) => [l.level, l.file, l.operator])).toEqual([[40, 'unbalanced.sta', 'alice'], [40, 'notes.txt', 'alice'], [40, 'upload', 'alice']]);
    expect(refusals[0]!.reason).toBe(unbalanced.body.error);
    expect(refusals[0]!.msg).toContain('does not balance');
  });

  it('follows STATEMENT_ACCEPT_UNBALANCED as the inbox does: stored, with its statement_unbalanced finding', async () => {
    const answer = await upload(small.url, '/api/statements', UNBALANCED, { name: 'unbalanced.sta' });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ statements_unbalanced: 1, balances_checked: 0, lines_new: 2 });
    const [finding] = answer.body.unbalanced_findings as number[];
    const [row] = await database.sql`select kind, status from discrepancies where id = ${finding!}`;
    expect(row).toEqual({ kind: 'statement_unbalanced', status: 'open' });
  });
});

describe('uploading a payout report', () => {
  it('imports it as `payout-report import` does (201, 200 again), and refuses one no payout fits (422, nothing stored)', async () => {
    const payout = await payoutEvent(database, { sepa: 'PO2026030200000001', cents: 119_748n, eventTime: '2026-03-02T06:00:00.000000000Z', invoices: ['INV-1'] });
    const answer = await upload(server.url, '/api/payout-reports', report('INV-1'), { name: 'Auszahlung 2026-03.csv', type: 'text/csv' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({
      kind: 'payout_report', file: 'Auszahlung 2026-03.csv', format: 'csv', already_imported: false, rows: 1, rows_new: 1, payouts: [payout],
      result: `Auszahlung 2026-03.csv: format csv, rows 1, rows new 1, payouts ${payout}`,
    });
    const [row] = await database.sql`select doc_no, transfer_amount_cents::text as cents from payout_report_rows where payout_uuid = ${payout}`;
    expect(row).toEqual({ doc_no: 'INV-1', cents: '119748' });
    expect((await upload(server.url, '/api/payout-reports', report('INV-1'))).body).toMatchObject({ already_imported: true, rows_new: 0 });

    const before = await counts();
    const refused = await upload(server.url, '/api/payout-reports', report('INV-9'), { name: 'other.csv' });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatch(/^1 row\(s\) without a payout reference \(invoices INV-9, transfer 119748 cents\) fit no payout exactly/);
    expect((await upload(server.url, '/api/payout-reports', Buffer.from('Order No;Doc No\r\n'))).status).toBe(422);
    expect(await counts()).toEqual(before);
    expect(logLines.some((l) => l.msg.startsWith('payout report upload refused') && l.file === 'other.csv')).toBe(true);
  });
});

describe('what an upload may not do', () => {
  it('is refused without a known token (401), when no token is configured (403), for another environment (403) and as a form (415), storing nothing', async () => {
    const before = await counts();
    for (const path of ['/api/statements', '/api/payout-reports']) {
      const body = path === '/api/statements' ? BALANCED : report('INV-1');
      expect((await upload(server.url, path, body, { token: null })).status).toBe(401);
      expect((await upload(server.url, path, body, { token: 'wrong-token-0123456789' })).status).toBe(401);
      expect((await upload(disabled.url, path, body)).status).toBe(403);
      expect((await upload(server.url, path, body, { query: 'env=production' })).status).toBe(403);
      const form = await upload(server.url, path, body, { type: 'multipart/form-data; boundary=x' });
      expect(form.status).toBe(415);
      expect(form.body.error).toMatch(/own bytes as the body, not a form/);
    }
    const get = await request(`${server.url}/api/statements`, { headers: { authorization: `Bearer ${ALICE}` } });
    expect(get.statusCode).toBe(405);
    await get.body.dump();
    expect(await counts()).toEqual(before);
  });

  it('refuses a file over OPERATOR_UPLOAD_MAX_BYTES with 413, whether its length is declared or not', async () => {
    const before = await counts();
    const big = Buffer.concat([BALANCED, Buffer.alloc(4096, 0x20)]);
    const declared = await upload(small.url, '/api/statements', big, { name: 'big.sta' });
    expect(declared.status).toBe(413);
    expect(declared.body.error).toBe('big.sta: larger than OPERATOR_UPLOAD_MAX_BYTES (2048 bytes): nothing was imported; drop the file in the inbox instead, or raise the setting');
    async function* chunked() {
      for (let i = 0; i < 8; i++) yield Buffer.alloc(1024, 0x20);
    }
    expect((await upload(small.url, '/api/statements', Readable.from(chunked()))).status).toBe(413);
    expect((await upload(small.url, '/api/payout-reports', big)).status).toBe(413);
    expect(await counts()).toEqual(before);
    expect(await uploads()).toEqual([]);
  });

  it('refuses a payout report over PAYOUT_REPORT_MAX_FILE_BYTES with 413 naming that setting, when it is the smaller limit', async () => {
    const strict = await startHttpServer({
      host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test',
      routes: operatorRoutes({ config: loadConfig({ DATABASE_URL: database.url, OPERATOR_TOKENS: `alice:${ALICE}`, PROVIDER_ENV: 'sandbox', PAYOUT_REPORT_MAX_FILE_BYTES: '1024' }), database, log: silentLogger() }),
    });
    try {
      const before = await counts();
      const answer = await upload(strict.url, '/api/payout-reports', Buffer.alloc(4096, 0x20), { name: 'report.csv' });
      expect(answer.status).toBe(413);
      expect(answer.body.error).toBe('report.csv: larger than PAYOUT_REPORT_MAX_FILE_BYTES (1024 bytes): nothing was imported; drop the file in the inbox instead, or raise the setting');
      expect(await counts()).toEqual(before);
    } finally {
      await strict.close();
    }
  });

  it('imports nothing from a client that goes away mid-body, and leaves no temporary file', async () => {
    const before = await counts();
    const req = rawRequest(new URL(`${server.url}/api/statements?name=cut.sta`), { method: 'POST', headers: { authorization: `Bearer ${ALICE}`, 'content-length': String(BALANCED.length) } });
    req.on('error', () => undefined);
    req.write(BALANCED.subarray(0, 40));
    await waitFor('the upload begun', async () => ((await uploads()).length === 1 ? true : undefined), 5_000, 20);
    req.destroy();
    await waitFor('its temporary folder removed', async () => ((await uploads()).length === 0 ? true : undefined), 5_000, 20);
    expect(await counts()).toEqual(before);
    expect(logLines.some((l) => l.msg === 'statement upload not received whole: nothing imported' && l.file === 'cut.sta')).toBe(true);
  });

  it(`takes ${MAX_UPLOADS_AT_ONCE} uploads at once and answers the next 503 with Retry-After`, async () => {
    const url = new URL(`${server.url}/api/statements?name=slow.sta`);
    const file = (i: number) => mt940(String(20 + i), [{ dc: 'C', cents: 100n + BigInt(i), ref: `S${i}` }], 100_100n + BigInt(i));
    // One more upload than there are places, each sending its first bytes and holding on: whichever
    // comes last is refused at once, the others wait for the rest of their bodies.
    const pending: ClientRequest[] = [];
    const answers: Promise<{ status: number; retryAfter: unknown; text: string }>[] = [];
    for (let i = 0; i <= MAX_UPLOADS_AT_ONCE; i++) {
      const req = rawRequest(url, { method: 'POST', headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/octet-stream' } });
      answers.push(new Promise((resolve) => {
        req.on('response', (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], text }));
        });
        req.on('error', (error) => resolve({ status: -1, retryAfter: undefined, text: error.message }));
      }));
      req.write(file(i).subarray(0, 10));
      pending.push(req);
    }
    const first = await Promise.race(answers);
    expect(first.status).toBe(503);
    expect(first.retryAfter).toBe('5');
    expect(JSON.parse(first.text)).toEqual({ error: `${MAX_UPLOADS_AT_ONCE} uploads are in progress: retry in a few seconds` });
    pending.forEach((req, i) => req.end(file(i).subarray(10)));
    const statuses = (await Promise.all(answers)).map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_UPLOADS_AT_ONCE);
    expect(statuses.filter((s) => s === 503)).toHaveLength(1);
    // The places are free again.
    expect((await upload(server.url, '/api/statements', file(9), { name: 'after.sta' })).status).toBe(201);
    expect(await uploads()).toEqual([]);
  }, 60_000);
});

describe('the recorded name of an upload', () => {
  it('is the last path segment, plain characters only, no leading dot, at most 200 bytes', () => {
    expect(uploadName('C:\\Users\\ada\\Kontoauszug März.sta')).toBe('Kontoauszug März.sta');
    expect(uploadName('../../etc/passwd')).toBe('passwd');
    expect(uploadName('..')).toBe('upload');
    expect(uploadName('.hidden.csv')).toBe('hidden.csv');
    expect(uploadName(null)).toBe('upload');
    expect(uploadName('a\u0000b<c>\u202e.csv')).toBe('a_b_c__.csv');
    expect(Buffer.byteLength(uploadName('ü'.repeat(300)))).toBe(200);
  });
});
