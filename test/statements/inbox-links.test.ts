import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { fileSource } from '../../src/statements/import.js';
import { startStatementInbox, type StatementInbox } from '../../src/statements/inbox.js';
import { StatementFormatError } from '../../src/statements/types.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { csvStatement } from './fixtures.js';

/**
 * Whoever can write the statement inbox must not move, read or overwrite anything outside it:
 * imported/ and failed/ replaced by symlinks, a .error name placed beforehand as a symlink, and
 * symlinks and pipes among the files. The inbox runs as in the daemon (DATABASE_URL set, so each
 * file is imported by the child process) against a real Postgres.
 */

let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase('statements_inbox_links');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-inbox-links-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const statement = (ref: string) => csvStatement([{ ref, date: '2026-03-02', cents: 1_00n, sepa: `PO20260302${ref.padStart(8, '0')}` }]);

interface Line { msg: string; [key: string]: unknown }

async function withInbox(name: string, body: (inbox: StatementInbox, outside: string, lines: Line[]) => Promise<void>): Promise<void> {
  const dataDir = path.join(root, name, 'data');
  const outside = path.join(root, name, 'outside');
  await mkdir(outside, { recursive: true });
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  const config = loadConfig({ RECON_DATA_DIR: dataDir, PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url });
  const shutdown = new Shutdown(silentLogger(), 5000);
  const inbox = startStatementInbox({ config, log, database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 0 });
  try {
    await inbox.runNow();
    await body(inbox, outside, lines);
  } finally {
    await shutdown.run('test');
  }
}

describe('statement inbox and symlinks', () => {
  it('a failed/ replaced by a symlink is re-created as a directory: nothing is moved or written outside', async () => {
    await withInbox('failed-link', async (inbox, outside, lines) => {
      await rm(path.join(inbox.dir, 'failed'), { recursive: true });
      await symlink(outside, path.join(inbox.dir, 'failed'));
      await writeFile(path.join(inbox.dir, 'junk.csv'), 'not a statement\n');
      const result = await inbox.runNow();
      expect(result.failed.map((f) => f.file)).toEqual(['junk.csv']);
      expect(await readdir(outside)).toEqual([]);
      expect((await lstat(path.join(inbox.dir, 'failed'))).isDirectory()).toBe(true);
      expect((await readdir(path.join(inbox.dir, 'failed'))).sort()).toEqual(['junk.csv', 'junk.csv.error']);
      expect(lines.some((l) => l.msg.includes('subfolder was a symlink') && l.folder === path.join(inbox.dir, 'failed'))).toBe(true);
    });
  });

  it('an imported/ replaced by a symlink is re-created: the imported file stays inside', async () => {
    await withInbox('imported-link', async (inbox, outside) => {
      await rm(path.join(inbox.dir, 'imported'), { recursive: true });
      await symlink(outside, path.join(inbox.dir, 'imported'));
      await writeFile(path.join(inbox.dir, 'good.csv'), statement('11'));
      const result = await inbox.runNow();
      expect(result.imported.map((r) => [r.file, r.linesNew])).toEqual([['good.csv', 1]]);
      expect(await readdir(outside)).toEqual([]);
      expect(await readdir(path.join(inbox.dir, 'imported'))).toEqual(['good.csv']);
    });
  });

  it('a failed/NAME.error placed as a symlink is never written through', async () => {
    await withInbox('error-link', async (inbox, outside) => {
      const victim = path.join(outside, 'victim.txt');
      await writeFile(victim, 'precious\n');
      await symlink(victim, path.join(inbox.dir, 'failed', 'junk.csv.error'));
      await writeFile(path.join(inbox.dir, 'junk.csv'), 'not a statement\n');
      const result = await inbox.runNow();
      expect(result.failed.map((f) => f.file)).toEqual(['junk.csv']);
      expect(await readFile(victim, 'utf8')).toBe('precious\n');
      const names = await readdir(path.join(inbox.dir, 'failed'));
      const moved = names.find((n) => n.startsWith('junk.csv.') && !n.endsWith('.error'));
      expect(moved, names.join(', ')).toBeDefined();
      expect(await readFile(path.join(inbox.dir, 'failed', `${moved}.error`), 'utf8')).toMatch(/unknown format/);
    });
  });

  it('symlinks and pipes in the inbox are skipped with one warning each, and neither read nor moved', async () => {
    await withInbox('entries', async (inbox, outside, lines) => {
      const target = path.join(outside, 'statement.csv');
      await writeFile(target, statement('21'));
      await symlink(target, path.join(inbox.dir, 'link.csv'));
      execFileSync('mkfifo', [path.join(inbox.dir, 'pipe.csv')]);
      await writeFile(path.join(inbox.dir, 'real.csv'), statement('22'));
      const first = await inbox.runNow();
      expect(first.imported.map((r) => r.file)).toEqual(['real.csv']);
      expect(first.failed).toEqual([]);
      await inbox.runNow();
      const skips = lines.filter((l) => l.msg.includes('skipped')).map((l) => [l.file, l.kind]);
      expect(skips).toEqual([['link.csv', 'symlink'], ['pipe.csv', 'pipe']]);
      expect((await lstat(path.join(inbox.dir, 'link.csv'))).isSymbolicLink()).toBe(true);
      expect(await readFile(target, 'utf8')).toBe(statement('21'));
      const [n] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = '21'`;
      expect(n?.n).toBe(0);
    });
  });
});

describe('fileSource without following links', () => {
  it('refuses a symlink and a pipe swapped in after the listing, and reads a regular file', async () => {
    const dir = path.join(root, 'source');
    await mkdir(dir);
    await writeFile(path.join(dir, 'real.csv'), 'abc');
    await symlink(path.join(dir, 'real.csv'), path.join(dir, 'link.csv'));
    execFileSync('mkfifo', [path.join(dir, 'pipe.csv')]);
    const read = async (name: string) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of fileSource(path.join(dir, name), { noFollow: true })()) chunks.push(chunk);
      return Buffer.concat(chunks).toString('utf8');
    };
    expect(await read('real.csv')).toBe('abc');
    await expect(read('link.csv')).rejects.toThrow(StatementFormatError);
    await expect(read('link.csv')).rejects.toThrow(/link\.csv: a symlink, not followed/);
    await expect(read('pipe.csv')).rejects.toThrow(/pipe\.csv: not a regular file/);
    // Without noFollow (the `statement import` command, whose user names the file) a link is read.
    const chunks: Uint8Array[] = [];
    for await (const chunk of fileSource(path.join(dir, 'link.csv'))()) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString('utf8')).toBe('abc');
  });
});
