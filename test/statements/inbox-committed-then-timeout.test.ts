import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { csvStatement } from '../statements/fixtures.js';

/**
 * The statement import process committed, then closed its database connection, and only then
 * answered the daemon. If the time limit (STATEMENT_IMPORT_TIMEOUT_SECONDS) fell in that gap, the
 * daemon killed the process and moved the file to failed/ as "did not finish" although its
 * statement was stored. It answers first now (import-child.ts).
 * Here the gap is widened the way a network stall after the commit widens it: a proxy that passes
 * everything but never completes the connection's close (the Terminate message and the FIN are
 * swallowed), so the child's `sql.end({ timeout: 5 })` waits its 5 s.
 */
let db: TestDatabase;
let root: string;
let server: Server;
const sockets = new Set<Socket>();
beforeAll(async () => {
  db = await createTestDatabase('inbox_commit_timeout');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-commit-timeout-'));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await rm(root, { recursive: true, force: true });
});

async function stallingCloseProxy(target: URL): Promise<string> {
  server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => {
      // Terminate ('X', length 4): swallowed, as a stalled network would.
      if (chunk.length === 5 && chunk[0] === 0x58) return;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return url.toString();
}

describe('statement inbox: an import that committed', () => {
  it('is not moved to failed/ as "did not finish" when the time limit comes after its commit', async () => {
    const proxyUrl = await stallingCloseProxy(new URL(db.url));
    const config = loadConfig({ RECON_DATA_DIR: path.join(root, 'data'), PROVIDER_ENV: 'sandbox', DATABASE_URL: proxyUrl, STATEMENT_IMPORT_TIMEOUT_SECONDS: '3' });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 0 });
    try {
      await inbox.runNow();
      await writeFile(path.join(inbox.dir, 'may.csv'), csvStatement([{ ref: 'CT-1', date: '2026-05-04', cents: 7_00n, sepa: 'PO2026050400000971' }]));
      const result = await inbox.runNow();
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = 'CT-1'`;
      const failed = await readdir(path.join(inbox.dir, 'failed'));
      const reason = failed.includes('may.csv.error') ? await readFile(path.join(inbox.dir, 'failed', 'may.csv.error'), 'utf8') : '';
      // Stored in the ledger: the file is imported, not failed with a reason saying it did not finish.
      expect(stored!.n).toBe(1);
      expect({ failed: result.failed, inFailed: failed, reason }).toEqual({ failed: [], inFailed: [], reason: '' });
      expect(await readdir(path.join(inbox.dir, 'imported'))).toEqual(['may.csv']);
    } finally {
      await shutdown.run('test');
    }
  }, 60_000);
});
