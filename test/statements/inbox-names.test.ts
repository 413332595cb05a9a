import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { escapedName, fitName, startStatementInbox, type StatementInbox } from '../../src/statements/inbox.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { csvStatement } from './fixtures.js';

/**
 * The statement inbox's file names and moves, as the daemon runs it (DATABASE_URL set: each file
 * imported in a child process) against a real Postgres: names that are not UTF-8, names too long
 * for a time suffix, a move to imported/ that fails after the import, and a WinSCP upload in progress.
 * `failRename` stands in for a move the file system refuses (the import, in the child, is not touched).
 */
const hook = vi.hoisted(() => ({ failRename: undefined as undefined | ((to: string) => boolean) }));
vi.mock('node:fs/promises', async (original) => {
  const actual = await original<typeof import('node:fs/promises')>();
  const rename = (async (from: Parameters<typeof actual.rename>[0], to: Parameters<typeof actual.rename>[1]) => {
    if (hook.failRename?.(String(to))) throw Object.assign(new Error(`EIO: i/o error, rename -> '${String(to)}'`), { code: 'EIO' });
    return actual.rename(from, to);
  }) as typeof actual.rename;
  return { ...actual, default: { ...actual, rename }, rename };
});

let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase('statements_inbox_names');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-inbox-names-'));
});
afterAll(async () => {
  hook.failRename = undefined;
  await rm(root, { recursive: true, force: true });
});

const statement = (ref: string) => csvStatement([{ ref, date: '2026-04-02', cents: 1_00n, sepa: `PO20260402${ref.padStart(8, '0')}` }]);

interface Line { msg: string; level: number; [key: string]: unknown }

async function withInbox(name: string, body: (inbox: StatementInbox, lines: Line[], registry: ReturnType<typeof testMetrics>['registry']) => Promise<void>): Promise<void> {
  const dataDir = path.join(root, name, 'data');
  await mkdir(dataDir, { recursive: true });
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  const config = loadConfig({ RECON_DATA_DIR: dataDir, PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url });
  const shutdown = new Shutdown(silentLogger(), 5000);
  const { registry, metrics } = testMetrics(db);
  const inbox = startStatementInbox({ config, log, database: db, shutdown, metrics }, { intervalMs: 3_600_000, settleMs: 0 });
  try {
    await inbox.runNow();
    await body(inbox, lines, registry);
  } finally {
    hook.failRename = undefined;
    await shutdown.run('test');
  }
}

async function linesWithRef(ref: string): Promise<number> {
  const [n] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = ${ref}`;
  return n!.n;
}

async function outcomes(registry: ReturnType<typeof testMetrics>['registry']): Promise<Record<string, number>> {
  const files = await registry.getSingleMetric('bnpl_recon_statement_inbox_files_total')!.get();
  return Object.fromEntries(files.values.map((v) => [v.labels.outcome, v.value]));
}

describe('statement inbox: file names', () => {
  it('imports a file whose name is not UTF-8 (a Latin-1 "März" from a Windows share or zip) under its name with the byte escaped, with a warning', async () => {
    await withInbox('latin1', async (inbox, lines) => {
      // "Kontoauszug_März.csv" with the ä as the single Latin-1 byte 0xE4: read as a string, the name
      // had U+FFFD, lstat said ENOENT and the scan took the file for gone, every minute, silently.
      const raw = Buffer.concat([Buffer.from(`${inbox.dir}/Kontoauszug_M`), Buffer.from([0xe4]), Buffer.from('rz.csv')]);
      await writeFile(raw, statement('31'));
      const result = await inbox.runNow();
      expect(result.failed).toEqual([]);
      expect(result.imported.map((r) => r.linesNew)).toEqual([1]);
      expect(await linesWithRef('31')).toBe(1);
      expect(lines.filter((l) => l.msg.startsWith('inbox: file name not valid UTF-8')).map((l) => [l.msg, l.file])).toEqual([
        ['inbox: file name not valid UTF-8: renamed with its odd bytes escaped', 'Kontoauszug_M%E4rz.csv'],
      ]);
      expect(lines.filter((l) => l.msg === 'statement imported').map((l) => l.file)).toEqual(['Kontoauszug_M%E4rz.csv']);
      expect((await readdir(inbox.dir, { encoding: 'buffer' })).filter((b) => b.includes(0xe4))).toEqual([]);
      expect(await readdir(path.join(inbox.dir, 'imported'))).toEqual(['Kontoauszug_M%E4rz.csv']);
    });
  });

  it('stores a long-named file dropped again (same name, new statement) and moves it to imported/ with a shortened name, not to failed/ with ENAMETOOLONG', async () => {
    await withInbox('long-name', async (inbox, lines, registry) => {
      // 240 bytes: a legal name (255 max); imported/ already holds one, so the move adds a 25-character time suffix.
      const name = `${'Kontoauszug_DE44500105175407324931_'.repeat(8).slice(0, 236)}.csv`;
      await writeFile(path.join(inbox.dir, name), statement('41'));
      const first = await inbox.runNow();
      expect(first.imported.map((r) => r.linesNew)).toEqual([1]);
      await writeFile(path.join(inbox.dir, name), statement('42'));
      const second = await inbox.runNow();
      expect(await linesWithRef('42')).toBe(1);
      expect(second.failed).toEqual([]);
      expect(second.imported.map((r) => r.linesNew)).toEqual([1]);
      expect(await readdir(path.join(inbox.dir, 'failed'))).toEqual([]);
      const moved = await readdir(path.join(inbox.dir, 'imported'));
      expect(moved.length).toBe(2);
      expect(Math.max(...moved.map((m) => Buffer.byteLength(m)))).toBeLessThanOrEqual(255 - '.error'.length);
      expect(lines.filter((l) => l.msg === 'not imported: moved to failed/')).toEqual([]);
      expect(await outcomes(registry)).toMatchObject({ imported: 2, failed: 0 });
    });
  });

  it('shortens a name for a suffix by UTF-8 bytes, at a character\'s end, leaving room for .error', () => {
    const suffix = '.2026-04-02T06-00-00-000Z';
    expect(fitName('a.csv', suffix)).toBe(`a.csv${suffix}`);
    const umlauts = `${'ä'.repeat(120)}.csv`; // 244 bytes, 124 characters
    const fitted = fitName(umlauts, suffix);
    expect(Buffer.byteLength(fitted)).toBeLessThanOrEqual(255 - '.error'.length);
    expect(fitted).toBe(`${'ä'.repeat(112)}${suffix}`);
    expect(fitName('x'.repeat(255), '')).toBe('x'.repeat(249));
  });

  it('escapes only the bytes of a name that are not UTF-8 (and %), as %XX', () => {
    expect(escapedName(Buffer.from('März 100%.csv'))).toBe('März 100%25.csv');
    expect(escapedName(Buffer.concat([Buffer.from('M'), Buffer.from([0xe4, 0xc3]), Buffer.from('rz')]))).toBe('M%E4%C3rz');
  });
});

describe('statement inbox: moves', () => {
  it('counts a stored statement whose move to imported/ fails as imported, logs it, and does not import it again while it stays', async () => {
    await withInbox('unmovable', async (inbox, lines, registry) => {
      await writeFile(path.join(inbox.dir, 'april.csv'), statement('51'));
      hook.failRename = (to) => to.includes(`${path.sep}imported${path.sep}`);
      const first = await inbox.runNow();
      expect(await linesWithRef('51')).toBe(1);
      expect(first.failed).toEqual([]);
      expect(first.imported.map((r) => r.linesNew)).toEqual([1]);
      expect(lines.filter((l) => l.msg.startsWith('imported, not movable')).map((l) => l.file)).toEqual(['april.csv']);
      expect(await readdir(path.join(inbox.dir, 'failed'))).toEqual([]);
      const second = await inbox.runNow();
      expect(second).toEqual({ imported: [], failed: [], deferred: [] });
      expect(await readdir(inbox.dir)).toContain('april.csv');
      expect(await outcomes(registry)).toMatchObject({ imported: 1, failed: 0 });
    });
  });

  it('leaves a WinSCP upload in progress (.filepart) alone', async () => {
    await withInbox('filepart', async (inbox, lines) => {
      await writeFile(path.join(inbox.dir, 'april.csv.filepart'), statement('61').slice(0, 20));
      const result = await inbox.runNow();
      expect(result).toEqual({ imported: [], failed: [], deferred: [] });
      expect(lines.filter((l) => l.level >= 40)).toEqual([]);
      expect(await readFile(path.join(inbox.dir, 'april.csv.filepart'))).toHaveLength(20);
    });
  });
});
