import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { command } from '../../src/commands/statement.js';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { UsageError } from '../../src/config/usage-error.js';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { csvStatement } from './fixtures.js';
import { testMetrics } from '../helpers/metrics.js';

let db: TestDatabase;
let dir: string;
beforeAll(async () => {
  db = await createTestDatabase('statements_cmd_inbox');
  dir = await mkdtemp(path.join(tmpdir(), 'bnpl-stmt-cmd-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const statement = (ref: string) => csvStatement([{ ref, date: '2026-03-02', cents: 1_00n, sepa: `PO20260302${ref.padStart(8, '0')}` }]);

describe('statement import', () => {
  it('prints a result line per file and a summary; a bad file does not stop the others and makes the exit status 1', async () => {
    const good = path.join(dir, 'a.txt');
    const junk = path.join(dir, 'junk.csv');
    await writeFile(good, statement('1'));
    await writeFile(junk, 'not a statement\n');
    const out: string[] = [];
    const err: string[] = [];
    const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => (out.push(String(c)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => (err.push(String(c)), true));
    const saved = { DATABASE_URL: process.env.DATABASE_URL, LOG_LEVEL: process.env.LOG_LEVEL };
    process.env.DATABASE_URL = db.url;
    process.env.LOG_LEVEL = 'silent';
    try {
      expect(await command.run(['import', good, good])).toBe(0);
      expect(await command.run(['import', junk, path.join(dir, 'missing.xml'), good])).toBe(1);
      await expect(command.run(['import'])).rejects.toBeInstanceOf(UsageError);
    } finally {
      o.mockRestore();
      e.mockRestore();
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
    expect(out).toEqual([
      // A CSV carries no balances: none could be checked.
      `${good}: format csv, statements 1, lines read 1, lines new 1, already known 0, known from overlapping statements 0, balances not checked 1\n`,
      `${good}: format csv, statements 1, lines read 1, lines new 0, already known 1, known from overlapping statements 0, balances not checked 1 (file already imported)\n`,
      'files 2: imported 2, failed 0; lines read 2, lines new 1, already known 1, known from overlapping statements 0\n',
      `${junk}: failed: unknown format: neither CAMT.053 XML, MT940 nor a CSV with booking date and amount columns\n`,
      expect.stringMatching(new RegExp(`^${path.join(dir, 'missing.xml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: failed: unreadable: ENOENT`)),
      `${good}: format csv, statements 1, lines read 1, lines new 0, already known 1, known from overlapping statements 0, balances not checked 1 (file already imported)\n`,
      'files 3: imported 1, failed 2; lines read 1, lines new 0, already known 1, known from overlapping statements 0\n',
    ]);
    expect(err.join('')).toContain(`${junk}: unknown format`);
    expect(err.join('')).toContain(`${path.join(dir, 'missing.xml')}: unreadable`);
  });
});

describe('statement import --profile', () => {
  it('reads a CSV with the user\'s profile file, and exits 2 naming a profile file that is not one', async () => {
    const csv = path.join(dir, 'hausbank.csv');
    const profile = path.join(dir, 'hausbank.json');
    const broken = path.join(dir, 'broken.json');
    await writeFile(csv, 'Tag;Summe;Whg;Text\r\n02.03.2026;12,00;EUR;Auszahlung PO2026030200077777\r\n03.03.2026;-2,00;EUR;Gebühr\r\n');
    await writeFile(profile, JSON.stringify({ name: 'Hausbank', columns: { bookingDate: ['Tag'], amount: ['Summe'], currency: ['Whg'], remittance: ['Text'] }, dateFormats: ['DD.MM.YYYY'], decimal: ',' }));
    await writeFile(broken, JSON.stringify({ name: 'Hausbank', columns: { bookingDate: ['Tag'] }, dateFormats: ['DD.MM.YYYY'] }));
    const out: string[] = [];
    const err: string[] = [];
    const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => (out.push(String(c)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => (err.push(String(c)), true));
    const saved = { DATABASE_URL: process.env.DATABASE_URL, LOG_LEVEL: process.env.LOG_LEVEL };
    process.env.DATABASE_URL = db.url;
    process.env.LOG_LEVEL = 'silent';
    try {
      expect(await command.run(['import', csv])).toBe(1);
      expect(await command.run(['import', '--profile', profile, csv])).toBe(0);
      expect(await command.run(['import', `--profile=${broken}`, csv])).toBe(2);
      await expect(command.run(['import', '--profile'])).rejects.toBeInstanceOf(UsageError);
    } finally {
      o.mockRestore();
      e.mockRestore();
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
    expect(out[0]).toMatch(/hausbank\.csv: failed: CSV row 1: no bank profile fits this header \(the columns found: 'Tag', 'Summe', 'Whg', 'Text'/);
    expect(out[2]).toBe(`${csv}: format csv, statements 1, lines read 2, lines new 2, already known 0, known from overlapping statements 0, balances not checked 1\n`);
    expect(err.join('')).toContain(`bnpl-recon statement: --profile: CSV profile ${broken}: not a CSV profile: columns: needs an amount column, or a debit and a credit column`);
    const rows = await db.sql<{ amount_cents: string; direction: string; sepa_reference: string | null }[]>`
      select amount_cents::text, direction::text, sepa_reference from statement_lines l join bank_statements b on b.id = l.statement_id
      where b.file_name = 'hausbank.csv' order by l.entry_index`;
    expect(rows).toEqual([
      { amount_cents: '1200', direction: 'credit', sepa_reference: 'PO2026030200077777' },
      { amount_cents: '200', direction: 'debit', sepa_reference: null },
    ]);
  });
});

describe('statement inbox', () => {
  it('imports dropped files into imported/, moves unreadable ones to failed/ with a .error, leaves files being written', async () => {
    const dataDir = path.join(dir, 'data');
    const config = loadConfig({ RECON_DATA_DIR: dataDir, PROVIDER_ENV: 'sandbox' });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const { registry, metrics } = testMetrics(db);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, metrics }, { intervalMs: 3_600_000, settleMs: 60_000 });
    try {
      await inbox.runNow();
      const old = new Date(Date.now() - 120_000);
      for (const [name, text] of [['export(3).txt', statement('7')], ['broken.xml', '<x/>'], ['.hidden', statement('8')]] as const) {
        await writeFile(path.join(inbox.dir, name), text);
        await utimes(path.join(inbox.dir, name), old, old);
      }
      await writeFile(path.join(inbox.dir, 'fresh.csv'), statement('9')); // just written: left for the next scan
      const result = await inbox.runNow();
      expect(result.imported.map((r) => [r.file, r.linesNew])).toEqual([['export(3).txt', 1]]);
      expect(result.failed.map((f) => f.file)).toEqual(['broken.xml']);
      expect(result.deferred).toEqual(['fresh.csv']);
      expect((await readdir(inbox.dir)).sort()).toEqual(['.hidden', 'failed', 'fresh.csv', 'imported']);
      expect(await readdir(path.join(inbox.dir, 'imported'))).toEqual(['export(3).txt']);
      expect((await readdir(path.join(inbox.dir, 'failed'))).sort()).toEqual(['broken.xml', 'broken.xml.error']);
      expect(await readFile(path.join(inbox.dir, 'failed', 'broken.xml.error'), 'utf8')).toMatch(/not a camt\.053|unknown format/);
      const [n] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = '7'`;
      expect(n?.n).toBe(1);
      const files = await registry.getSingleMetric('bnpl_recon_statement_inbox_files_total')!.get();
      expect(Object.fromEntries(files.values.map((v) => [v.labels.outcome, v.value]))).toEqual({ imported: 1, already_imported: 0, failed: 1, deferred: 1 });
      expect((await registry.getSingleMetric('bnpl_recon_statement_lines_imported_total')!.get()).values[0]?.value).toBe(1);
    } finally {
      await shutdown.run('test');
    }
    await expect(inbox.runNow()).rejects.toThrow(/stopping/);
  });
});

describe('statement inbox failures', () => {
  const old = new Date(Date.now() - 120_000);
  const drop = async (inboxDir: string, name: string, text: string) => {
    await writeFile(path.join(inboxDir, name), text);
    await utimes(path.join(inboxDir, name), old, old);
  };
  // Opening 100.00 + 1.00 credit claims a closing balance of 102.00: one booking is missing.
  const unbalanced = [':20:X', ':25:DE44500105175407324931', ':28C:1/1', ':60F:C260302EUR100,00', ':61:2603020302C1,00NTRFNONREF//U1', ':86:x', ':62F:C260302EUR102,00', '-'].join('\r\n');

  it('with STATEMENT_ACCEPT_UNBALANCED imports it (in its import process) and opens a statement_unbalanced finding', async () => {
    const config = loadConfig({ RECON_DATA_DIR: path.join(dir, 'data-accept'), PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url, STATEMENT_ACCEPT_UNBALANCED: 'true' });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 60_000 });
    try {
      await inbox.runNow();
      await drop(inbox.dir, 'accepted.sta', unbalanced.replace(':28C:1/1', ':28C:2/1').replace('//U1', '//U2'));
      const result = await inbox.runNow();
      expect(result.failed).toEqual([]);
      expect(result.imported).toEqual([expect.objectContaining({ file: 'accepted.sta', linesNew: 1, statementsUnbalanced: 1, unbalancedFindings: [expect.any(Number)] })]);
      const [finding] = await db.sql`select kind::text, status::text, expected, observed from discrepancies where id = ${result.imported[0]!.unbalancedFindings[0]!}`;
      expect(finding).toEqual({ kind: 'statement_unbalanced', status: 'open', expected: '10200', observed: '10100' });
      expect(await readdir(path.join(inbox.dir, 'imported'))).toEqual(['accepted.sta']);
    } finally {
      await shutdown.run('test');
    }
  });

  it('moves a refused statement to failed/ with its reason and does not try it again', async () => {
    const config = loadConfig({ RECON_DATA_DIR: path.join(dir, 'data-failed'), PROVIDER_ENV: 'sandbox' });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 60_000 });
    try {
      await inbox.runNow();
      await drop(inbox.dir, 'unbalanced.sta', unbalanced);
      const first = await inbox.runNow();
      expect(first.failed).toEqual([{ file: 'unbalanced.sta', error: expect.stringMatching(/does not balance.*difference 1\.00/) }]);
      expect(await readFile(path.join(inbox.dir, 'failed', 'unbalanced.sta.error'), 'utf8')).toMatch(/closing balance is 102\.00/);
      expect(await inbox.runNow()).toEqual({ imported: [], failed: [], deferred: [] });
      const [n] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = 'U1'`;
      expect(n?.n).toBe(0);
    } finally {
      await shutdown.run('test');
    }
  });

  it('leaves a file in place for the next scan only when the database is unreachable', async () => {
    const config = loadConfig({ RECON_DATA_DIR: path.join(dir, 'data-outage'), PROVIDER_ENV: 'sandbox' });
    const shutdown = new Shutdown(silentLogger(), 5000);
    // A port nothing listens on: connection refused, as when Postgres is down.
    const sql = createSqlClient('postgres://postgres@127.0.0.1:1/none', { poolMax: 1 });
    const down = databaseOver(sql);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: down, shutdown, ...testMetrics(down) }, { intervalMs: 3_600_000, settleMs: 60_000 });
    try {
      await inbox.runNow();
      await drop(inbox.dir, 'later.csv', statement('21'));
      await drop(inbox.dir, 'junk.txt', 'not a statement');
      const r = await inbox.runNow();
      expect(r.deferred).toEqual(['later.csv']);
      expect(r.failed.map((f) => f.file)).toEqual(['junk.txt']);
      expect((await readdir(inbox.dir)).sort()).toEqual(['failed', 'imported', 'later.csv']);
    } finally {
      await shutdown.run('test');
      await down.close();
    }
  });
});
