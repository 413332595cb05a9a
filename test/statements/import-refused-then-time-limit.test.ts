import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerHeldImport } from '../../src/statements/daemon-import.js';
import { importInChildProcess } from '../../src/statements/isolated-import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { csvStatement } from '../statements/fixtures.js';

/**
 * The import process refused the file (a line over the amount limit: its transaction rolled back)
 * and answered the daemon with the refusal; then its connection's close stalls (as in
 * inbox-committed-then-timeout.test.ts: the Terminate message is swallowed, so `sql.end({ timeout:
 * 5 })` waits 5 s), and the time limit comes in that gap. The answer given before the time limit
 * must stand: a refused file goes to failed/ with its reason (an upload 422 naming it), not be
 * reported held by the ledger ("idle after rollback"), which leaves it in the inbox to be retried at
 * every scan and answers an upload 503 "upload it again later".
 */
let db: TestDatabase;
let root: string;
let server: Server | undefined;
const sockets = new Set<Socket>();
beforeAll(async () => {
  db = await createTestDatabase('import_refused_then_limit');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-import-refused-limit-'));
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
      if (chunk.length === 5 && chunk[0] === 0x58) return;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const address = server.address() as { port: number };
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return url.toString();
}

describe('an import that answered with a refusal before its time limit, its close stalling past it', () => {
  it('is reported as the refusal (StatementFormatError naming the limit), not as held by the ledger', async () => {
    const proxyUrl = await stallingCloseProxy(new URL(db.url));
    const file = path.join(root, 'big.csv');
    await writeFile(file, csvStatement([{ ref: 'ZR-1', date: '2026-05-04', cents: 7_000_00n, sepa: 'PO2026050400000981' }]));
    const outcome = await importInChildProcess(
      { databaseUrl: proxyUrl, environment: 'sandbox', file, name: 'big.csv', maxFileBytes: 1 << 20, maxAmountCents: '100', acceptUnbalanced: false },
      { maxMemoryMb: 256, timeoutMs: 3_000, ledgerHeld: (pid) => ledgerHeldImport(db, pid) },
    ).then(
      () => 'imported',
      (e: unknown) => `${(e as Error).name}: ${(e as Error).message}`,
    );
    expect(outcome).toMatch(/^StatementFormatError: .*STATEMENT_MAX_AMOUNT_CENTS/);
  }, 60_000);
});
