import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
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
 * docs/how-it-decides.md lists the names the inbox leaves alone: `.tmp`, `.part`, `.partial`,
 * `.filepart`, `.crdownload`, `.swp` and dot files. inbox.ts IGNORED also matched `.error`, so a
 * file so named was neither imported, nor moved to failed/, nor logged, nor counted: silently left
 * forever, scan after scan.
 */
let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase('inbox_error_suffix');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-error-suffix-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Line { msg: string; level: number; [key: string]: unknown }

describe('statement inbox: a file named *.error', () => {
  it('is imported (not a documented upload-in-progress name), or at least said', async () => {
    const lines: Line[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
    const config = loadConfig({ RECON_DATA_DIR: path.join(root, 'data'), PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startStatementInbox({ config, log, database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 0 });
    try {
      await inbox.runNow();
      await writeFile(path.join(inbox.dir, 'statement.error'), csvStatement([{ ref: 'ES-1', date: '2026-06-03', cents: 4_00n, sepa: 'PO2026060300000991' }]));
      const result = await inbox.runNow();
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = 'ES-1'`;
      const said = lines.filter((l) => l.file === 'statement.error' && l.level >= 40).map((l) => l.msg);
      // Imported like any other name, or, if the name is to be left alone, a warning naming it: never silence.
      expect({ importedOrWarned: stored!.n === 1 || said.length > 0, importedFiles: result.imported.map((r) => r.file), leftInInbox: (await readdir(inbox.dir)).includes('statement.error') })
        .toEqual({ importedOrWarned: true, importedFiles: stored!.n === 1 ? ['statement.error'] : [], leftInInbox: stored!.n !== 1 });
    } finally {
      await shutdown.run('test');
    }
  }, 60_000);
});
