import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { csvStatement } from '../statements/fixtures.js';

/**
 * A file whose modification time lies ahead of the daemon's clock: unzipped from a bank's ZIP
 * (ZIP times are local time without a zone: made at 10:00 CEST, extracted at 08:00 UTC, it is
 * stamped two hours ahead), or copied with its time kept (cp -p, rsync -t) from a host whose clock
 * runs ahead. The docs leave alone only files "modified in the last few seconds"; inbox.ts's
 * `Date.now() - mtime < settleMs` was true for every future time, so the file waited until the clock
 * reached it (hours, or forever for a bogus year), scan after scan, with no log line. Now it is
 * imported once unchanged from one scan to the next, with a warning.
 */
let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase('inbox_future_mtime');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-future-mtime-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Line { msg: string; level: number; [key: string]: unknown }

describe('statement inbox: a settled file stamped in the future', () => {
  it('is imported once it has stopped changing, not left silently until the clock reaches its time', async () => {
    const lines: Line[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
    const config = loadConfig({ RECON_DATA_DIR: path.join(root, 'data'), PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url });
    const shutdown = new Shutdown(silentLogger(), 5000);
    // settle 1 s instead of 5 s, to keep the test short
    const inbox = startStatementInbox({ config, log, database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 1_000 });
    try {
      await inbox.runNow();
      const file = path.join(inbox.dir, 'Kontoauszug_2026-06.csv');
      await writeFile(file, csvStatement([{ ref: 'FM-1', date: '2026-06-04', cents: 5_00n, sepa: 'PO2026060400000993' }]));
      const ahead = new Date(Date.now() + 2 * 3600_000);
      await utimes(file, ahead, ahead);
      // Several scans, well past the settle time, the file untouched all along.
      let last;
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 1_200));
        last = await inbox.runNow();
      }
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = 'FM-1'`;
      // docs/how-it-decides.md, "Bank statements": only a file modified in the last few seconds waits.
      expect({ stored: stored!.n, stillWaiting: (await readdir(inbox.dir)).includes('Kontoauszug_2026-06.csv'), deferred: last?.deferred })
        .toEqual({ stored: 1, stillWaiting: false, deferred: [] });
      void lines;
    } finally {
      await shutdown.run('test');
    }
  }, 60_000);
});
