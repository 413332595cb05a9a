import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { ledgerHeldImport } from '../../src/statements/daemon-import.js';
import { ImportCrashedError, importInChildProcess } from '../../src/statements/isolated-import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { csvStatement } from '../statements/fixtures.js';

/**
 * The server commits the import's transaction, but its CommitComplete reaches the import process
 * late (a network that stalls right after the commit, as inbox-committed-then-timeout.test.ts has
 * it stall at the close). The time limit comes while the process waits for that answer: the
 * backend is idle after its commit, which is the network's time, not the file's work. The file must
 * not be moved to failed/ (an upload answered 422 "nothing stored") as "did not finish".
 */
let db: TestDatabase;
let root: string;
const servers: Server[] = [];
const sockets = new Set<Socket>();
beforeAll(async () => {
  db = await createTestDatabase('import_commit_answer_lost');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-import-commit-answer-'));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all(servers.map((server) => new Promise<void>((r) => server.close(() => r()))));
  await rm(root, { recursive: true, force: true });
});

/** Passes everything, but once a client sent `commit`, holds what the server says back for `stallMs`. */
async function commitAnswerStallingProxy(target: URL, stallMs: number): Promise<string> {
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let stallUntil = 0;
    client.on('data', (chunk: Buffer) => {
      if (stallUntil === 0 && /\0commit\0/i.test(chunk.toString("latin1"))) stallUntil = Date.now() + stallMs;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      const wait = stallUntil - Date.now();
      if (wait > 0) {
        upstream.pause();
        setTimeout(() => {
          client.write(chunk);
          upstream.resume();
        }, wait);
      } else client.write(chunk);
    });
    client.on('error', () => undefined).on('close', () => upstream.destroy());
    upstream.on('error', () => undefined).on('close', () => client.destroy());
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return url.toString();
}

describe('an import whose commit is answered late, after its time limit', () => {
  it('inbox: the stored statement is not moved to failed/ as "did not finish"', async () => {
    const proxyUrl = await commitAnswerStallingProxy(new URL(db.url), 12_000);
    const config = loadConfig({ RECON_DATA_DIR: path.join(root, 'data'), PROVIDER_ENV: 'sandbox', DATABASE_URL: proxyUrl, STATEMENT_IMPORT_TIMEOUT_SECONDS: '4' });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 0 });
    try {
      await inbox.runNow();
      await writeFile(path.join(inbox.dir, 'may.csv'), csvStatement([{ ref: 'CA-1', date: '2026-05-04', cents: 7_00n, sepa: 'PO2026050400000971' }]));
      const result = await inbox.runNow();
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = 'CA-1'`;
      const failed = await readdir(path.join(inbox.dir, 'failed'));
      const reason = failed.includes('may.csv.error') ? await readFile(path.join(inbox.dir, 'failed', 'may.csv.error'), 'utf8') : '';
      expect(stored!.n, 'precondition: the import committed').toBe(1);
      expect({ failed: result.failed.map((f) => f.file), inFailed: failed, reason }).toEqual({ failed: [], inFailed: [], reason: '' });
    } finally {
      await shutdown.run('test');
    }
  }, 60_000);

  it('importInChildProcess (as the upload runs it): a stored statement is not reported ImportCrashedError (422, "nothing stored")', async () => {
    const proxyUrl = await commitAnswerStallingProxy(new URL(db.url), 12_000);
    const file = path.join(root, 'june.csv');
    await writeFile(file, csvStatement([{ ref: 'CA-2', date: '2026-06-04', cents: 8_00n, sepa: 'PO2026060400000972' }]));
    const outcome = await importInChildProcess(
      { databaseUrl: proxyUrl, environment: 'sandbox', file, name: 'june.csv', maxFileBytes: 1 << 20, maxAmountCents: '1000000000000', acceptUnbalanced: false },
      { maxMemoryMb: 256, timeoutMs: 4_000, ledgerHeld: (pid) => ledgerHeldImport(db, pid) },
    ).catch((e: unknown) => e);
    const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference = 'CA-2'`;
    expect(stored!.n, 'precondition: the import committed').toBe(1);
    expect(outcome instanceof ImportCrashedError ? `ImportCrashedError: ${outcome.message}` : 'not blamed on the file').toBe('not blamed on the file');
  }, 60_000);
});
