import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createSqlClient } from '../../src/db/database.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startPayoutReportInbox } from '../../src/payout-import/inbox.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { waitFor } from '../helpers/wait.js';
import { invoiceRow, payoutEvent, reportCsv, transferOf } from '../payout-reports/fixtures.js';
import { csvStatement } from '../statements/fixtures.js';

/**
 * A file dropped again under the same name (written as NAME.part, then renamed: docs/operating.md)
 * while the scan is importing the previous file of that name. The inbox moved whatever was at the
 * path after the import, so the new file landed in imported/ without ever being imported: lost.
 * The import is held at a point it really waits at (a lock another session holds), nothing mocked.
 */
let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase('inbox_replaced');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-inbox-replaced-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Runs `during` while another session holds `hold` (SQL run inside a transaction) and the import waits for it. */
async function whileHeld(hold: string, waiting: string, during: () => Promise<void>, scan: () => Promise<unknown>): Promise<void> {
  const other = createSqlClient(db.url, { poolMax: 1 });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const tx = other.begin(async (t) => {
    await t.unsafe(hold);
    held();
    await released;
  });
  await isHeld;
  const scanned = scan();
  try {
    await waitFor('the import to wait for the lock', async () => {
      const [r] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_locks where not granted and ${db.sql.unsafe(waiting)}`;
      return r!.n > 0 ? true : undefined;
    }, 30_000, 50);
    await during();
  } finally {
    release();
    await tx;
    await other.end({ timeout: 5 });
  }
  await scanned;
}

describe('inbox: a file renamed over the name while that name is being imported', () => {
  it('payout-report inbox: the new report is not moved to imported/ unless it was imported', async () => {
    const config = loadConfig({ RECON_DATA_DIR: path.join(root, 'payout'), PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startPayoutReportInbox({ config, log: silentLogger(), database: db, shutdown }, { intervalMs: 3_600_000, settleMs: 0 });
    try {
      await inbox.runNow();
      const first = [invoiceRow({ doc: 'RP-INV-1', cents: 10_000n })];
      const second = [invoiceRow({ doc: 'RP-INV-2', cents: 20_000n })];
      await payoutEvent(db, { sepa: 'PO2026040200000951', cents: transferOf(first), eventTime: '2026-04-02T06:00:00.000000000Z', invoices: ['RP-INV-1'] });
      await payoutEvent(db, { sepa: 'PO2026040200000952', cents: transferOf(second), eventTime: '2026-04-02T06:00:00.000000000Z', invoices: ['RP-INV-2'] });
      const file = path.join(inbox.dir, 'report.csv');
      await writeFile(file, reportCsv(first));
      const key = lockKey('payoutReportImport', 'sandbox');
      await whileHeld(
        `select pg_advisory_xact_lock(${key})`,
        `locktype = 'advisory'`,
        async () => {
          // The next day's report of the same name, dropped the documented way.
          await writeFile(`${file}.part`, reportCsv(second));
          await rename(`${file}.part`, file);
        },
        () => inbox.runNow(),
      );
      const inImported = await readdir(path.join(inbox.dir, 'imported'));
      const stillWaiting = (await readdir(inbox.dir)).filter((n) => n === 'report.csv');
      // Every file in imported/ is one the ledger holds; the second report is either held or still in the inbox.
      const storedShas = (await db.sql<{ sha256: string }[]>`select sha256 from payout_reports`).map((r) => r.sha256);
      const movedButNotStored: string[] = [];
      for (const n of inImported) {
        const bytes = await readFile(path.join(inbox.dir, 'imported', n));
        if (!storedShas.includes(sha(bytes))) movedButNotStored.push(`${n}: ${bytes.toString('utf8').includes('RP-INV-2') ? 'the second report' : 'the first report'}`);
      }
      expect({ movedButNotStored, secondReportStoredOrWaiting: storedShas.includes(sha(Buffer.from(reportCsv(second)))) || stillWaiting.length === 1 })
        .toEqual({ movedButNotStored: [], secondReportStoredOrWaiting: true });
    } finally {
      await shutdown.run('test');
    }
  });

  it('statement inbox (import in its child process): the new statement is not moved to imported/ unless it was imported', async () => {
    const config = loadConfig({ RECON_DATA_DIR: path.join(root, 'statement'), PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 0 });
    try {
      await inbox.runNow();
      const first = csvStatement([{ ref: 'RP-S-1', date: '2026-04-02', cents: 1_00n, sepa: 'PO2026040200000961' }]);
      const second = csvStatement([{ ref: 'RP-S-2', date: '2026-04-03', cents: 2_00n, sepa: 'PO2026040300000962' }]);
      const file = path.join(inbox.dir, 'statement.csv');
      await writeFile(file, first);
      // Held after both of the import's reads of the file (its store of the lines waits), before it commits.
      await whileHeld(
        'lock table statement_lines in share mode',
        `relation = 'statement_lines'::regclass`,
        async () => {
          await writeFile(`${file}.part`, second);
          await rename(`${file}.part`, file);
        },
        () => inbox.runNow(),
      );
      const [s1] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = 'RP-S-1'`;
      const [s2] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = 'RP-S-2'`;
      const stillWaiting = (await readdir(inbox.dir)).includes('statement.csv');
      const imported = await readdir(path.join(inbox.dir, 'imported'));
      const importedTexts = await Promise.all(imported.map((n) => readFile(path.join(inbox.dir, 'imported', n), 'utf8')));
      expect({
        firstStored: s1!.n,
        secondStoredOrWaiting: s2!.n === 1 || stillWaiting,
        secondInImportedButNotStored: importedTexts.some((t) => t.includes('RP-S-2')) && s2!.n === 0,
      }).toEqual({ firstStored: 1, secondStoredOrWaiting: true, secondInImportedButNotStored: false });
    } finally {
      await shutdown.run('test');
    }
  });
});
