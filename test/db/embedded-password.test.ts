import { mkdtemp, readFile, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRunningEmbedded, PASSWORD_FILE, startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import { silentLogger } from '../../src/log/logger.js';

/**
 * The embedded ledger listens on loopback, where every local user can reach it. The password every
 * cluster had before was published with the code (`bnpl-recon-embedded`), so anyone who found the
 * port signed in as the Postgres superuser: read and rewrote the ledger, and ran programs as the
 * server's user (COPY ... TO PROGRAM). Each data directory now has its own.
 */
const PUBLISHED = 'bnpl-recon-embedded';

async function signIn(port: number, password: string): Promise<string> {
  const sql = postgres({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres', max: 1, connect_timeout: 10, onnotice: () => {} });
  try {
    const [row] = await sql<{ su: string }[]>`select current_setting('is_superuser') as su`;
    return `signed in (superuser ${row!.su})`;
  } catch (error) {
    return `refused (${(error as { code?: string }).code ?? (error as Error).message})`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

let dataDir: string;
let server: EmbeddedServer | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'bnpl-recon-embedded-password-'));
  server = await startEmbeddedPostgres(dataDir, silentLogger(), { owner: 'embedded-password test' });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
}, 60_000);

describe('the embedded ledger on loopback', () => {
  it('refuses the password published with the code, and takes its data directory\'s own, readable by its user only', async () => {
    expect(await signIn(server!.port, PUBLISHED)).toBe('refused (28P01)');
    const file = path.join(dataDir, PASSWORD_FILE);
    const password = (await readFile(file, 'utf8')).trim();
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await signIn(server!.port, password)).toBe('signed in (superuser on)');
    expect(server!.url).toBe(`postgres://postgres:${password}@127.0.0.1:${server!.port}/postgres`);
  });

  it('gives another command of the same user the running ledger with that password', async () => {
    const running = await findRunningEmbedded([dataDir]);
    expect(running?.url).toBe(server!.url);
  });

  it('gives a cluster created with the published password one of its own at its next start', { timeout: 180_000 }, async () => {
    // What a release before this one left: the published password, no password file.
    const admin = postgres(server!.url, { max: 1, onnotice: () => {} });
    await admin.unsafe('create table kept_across_restart (note text)');
    await admin.unsafe(`insert into kept_across_restart values ('written before')`);
    await admin.unsafe(`alter role postgres password '${PUBLISHED}'`);
    await admin.end({ timeout: 5 });
    await server!.stop();
    await unlink(path.join(dataDir, PASSWORD_FILE));

    server = await startEmbeddedPostgres(dataDir, silentLogger(), { owner: 'embedded-password test, again' });
    const password = (await readFile(path.join(dataDir, PASSWORD_FILE), 'utf8')).trim();
    expect(await signIn(server.port, PUBLISHED)).toBe('refused (28P01)');
    expect(await signIn(server.port, password)).toBe('signed in (superuser on)');
    // The ledger kept its data: the same cluster, not a new one.
    const sql = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ note: string }[]>`select note from kept_across_restart`;
      expect(rows.map((r) => r.note)).toEqual(['written before']);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});
