import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, open, readdir, readFile, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startPayoutReportInbox } from '../../src/payout-import/inbox.js';
import type { StatementInbox } from '../../src/statements/inbox.js';
import type { PayoutReportImportResult } from '../../src/payout-import/import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceRow, payoutEvent, reportCsv, transferOf } from './fixtures.js';

/**
 * The payout report inbox (src/payout-import/inbox.ts over statements/inbox.ts startFileInbox)
 * against a real Postgres. `beforeRead` stands in for what happens between the scan's lstat and the
 * import's opening of the file: another replica sharing the inbox (RWX claim) moving it to
 * imported/, or whoever can write the inbox swapping the file for a symlink or a pipe. The scan code
 * itself is the real one; only node:fs/promises open (and readFile) get a hook before they run, and
 * then run as they are: a deterministic place to put the race, not a stand-in for the file system.
 * Reports are CSV files in the provider's columns (fixtures.ts reportCsv) read by the real reader.
 */
const hook = vi.hoisted(() => ({ beforeRead: undefined as undefined | ((file: string) => Promise<void>) }));
vi.mock('node:fs/promises', async (original) => {
  const actual = await original<typeof import('node:fs/promises')>();
  const wrap = <F extends (...a: never[]) => unknown>(f: F) =>
    (async (file: unknown, ...rest: unknown[]) => {
      if (typeof file === 'string' && hook.beforeRead) await hook.beforeRead(file);
      return (f as unknown as (...a: unknown[]) => unknown)(file, ...rest);
    }) as unknown as F;
  const readFile = wrap(actual.readFile);
  const open = wrap(actual.open);
  return { ...actual, default: { ...actual, readFile, open }, readFile, open };
});

let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase('payout_report_inbox_races');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-payout-inbox-races-'));
});
afterAll(async () => {
  hook.beforeRead = undefined;
  await rm(root, { recursive: true, force: true });
});

interface Line { msg: string; level: number; [key: string]: unknown }

async function withInbox(name: string, body: (inbox: StatementInbox<PayoutReportImportResult>, lines: Line[]) => Promise<void>): Promise<void> {
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  const config = loadConfig({ RECON_DATA_DIR: path.join(root, name), PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url });
  const shutdown = new Shutdown(silentLogger(), 5000);
  const inbox = startPayoutReportInbox({ config, log, database: db, shutdown }, { intervalMs: 3_600_000, settleMs: 0 });
  try {
    await inbox.runNow();
    await body(inbox, lines);
  } finally {
    hook.beforeRead = undefined;
    await inbox.stop();
  }
}

describe('payout report inbox shared by two replicas', () => {
  it('does not report as failed a file the other replica moved to imported/ just before this one opened it', async () => {
    await withInbox('replica', async (inbox, lines) => {
      const rows = [invoiceRow({ doc: 'ZZ-INV-1', cents: 10_000n })];
      await payoutEvent(db, { sepa: 'PO2026040200000901', cents: transferOf(rows), eventTime: '2026-04-02T06:00:00.000000000Z', invoices: ['ZZ-INV-1'] });
      await writeFile(path.join(inbox.dir, 'report.csv'), reportCsv(rows));
      // The other replica wins the race: it imported the file and moves it to imported/ just before this one reads it.
      hook.beforeRead = async (file) => {
        if (path.basename(file) === 'report.csv') await rename(file, path.join(inbox.dir, 'imported', 'report.csv'));
      };
      const result = await inbox.runNow();
      // statements/inbox.ts: one replica "finds it gone when moving it, which is fine". The read's
      // ENOENT was once wrapped without its code: counted failed, "not imported: moved to failed/".
      expect(result.failed).toEqual([]);
      expect(lines.filter((l) => l.msg === 'not imported: moved to failed/').map((l) => l.reason)).toEqual([]);
      expect(await readdir(path.join(inbox.dir, 'imported'))).toEqual(['report.csv']);
    });
  });
});

describe('payout report inbox and files swapped after the scan looked at them', () => {
  it('refuses, without reading through it, a symlink to a report outside the inbox swapped in after the scan listed the file', async () => {
    await withInbox('symlink', async (inbox) => {
      const rows = [invoiceRow({ doc: 'ZZ-INV-2', cents: 20_000n })];
      await payoutEvent(db, { sepa: 'PO2026040200000902', cents: transferOf(rows), eventTime: '2026-04-02T06:00:00.000000000Z', invoices: ['ZZ-INV-2'] });
      const outside = path.join(root, 'symlink-outside');
      await mkdir(outside, { recursive: true });
      await writeFile(path.join(outside, 'private.csv'), reportCsv(rows));
      await writeFile(path.join(inbox.dir, 'drop.csv'), 'placeholder');
      hook.beforeRead = async (file) => {
        if (path.basename(file) !== 'drop.csv') return;
        await unlink(file);
        await symlink(path.join(outside, 'private.csv'), file);
      };
      const result = await inbox.runNow();
      // As the statement inbox (how-it-decides.md: "opened without following links"): refused, not read through.
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from payout_report_rows where doc_no = 'ZZ-INV-2'`;
      expect(stored!.n).toBe(0);
      expect(result.imported).toEqual([]);
      expect(result.failed).toEqual([{ file: 'drop.csv', error: 'drop.csv: a symlink, not followed' }]);
      // The report behind the link is one the inbox imports when dropped as a file: refused for the link alone.
      await writeFile(path.join(inbox.dir, 'dropped.csv'), await readFile(path.join(outside, 'private.csv')));
      expect((await inbox.runNow()).imported.map((r) => r.rowsNew)).toEqual([1]);
    });
  });

  it('refuses a named pipe swapped in after the listing instead of hanging the scan (and with it the daemon\'s shutdown)', async () => {
    await withInbox('fifo', async (inbox) => {
      await writeFile(path.join(inbox.dir, 'pipe.csv'), 'placeholder');
      const fifo = path.join(inbox.dir, 'pipe.csv');
      hook.beforeRead = async (file) => {
        if (path.basename(file) !== 'pipe.csv') return;
        await unlink(file);
        execFileSync('mkfifo', [file]);
      };
      const scan = inbox.runNow();
      const outcome = await Promise.race([scan.then(() => 'finished', () => 'finished'), new Promise((r) => setTimeout(r, 5_000, 'still blocked after 5 s'))]);
      if (outcome !== 'finished') {
        // Unblock the read (a writer opens and closes the pipe) so the test can end.
        const writer = await open(fifo, 'w');
        await writer.close();
        await scan.catch(() => undefined);
      }
      expect(outcome).toBe('finished');
      expect((await scan).failed).toEqual([{ file: 'pipe.csv', error: 'pipe.csv: not a regular file' }]);
    });
  }, 20_000);
});
