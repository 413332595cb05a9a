import { randomBytes } from 'node:crypto';
import { beforeAll, inject } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';

export interface TestDatabase extends Database {
  url: string;
  name: string;
  /** Drops the database (the isolation setup file does, when the file's tests passed). */
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** The server every test talks to (see test/global-setup.ts). */
export function serverUrl(): string {
  return inject('databaseUrl');
}

/**
 * Every database this test file created. test/helpers/database-isolation.ts (a setup file) drops
 * them after the file's own afterAll hooks when every test passed, and closes but keeps them when
 * one failed, so its rows are there to inspect. Files run in processes of their own (pool 'forks'),
 * so the list is the file's.
 */
export const createdDatabases: TestDatabase[] = [];

/**
 * A fresh database on the test server, named after the test file, with every migration applied
 * (cloned from the run's template).
 * Each test file gets its own, so files run in parallel without seeing each other's rows. Nothing
 * to clean up: the isolation setup file drops it (or keeps it after a failure).
 */
export async function createTestDatabase(label: string, options: { migrate?: boolean; poolMax?: number } = {}): Promise<TestDatabase> {
  const admin = createSqlClient(serverUrl(), { poolMax: 1 });
  const name = `t_${label.replace(/[^a-z0-9]+/gi, '_').toLowerCase().slice(0, 40)}_${randomBytes(4).toString('hex')}`;
  try {
    // A copy of the run's migrated template (test/global-setup.ts) unless the test wants it bare.
    await admin.unsafe(options.migrate === false ? `create database "${name}"` : `create database "${name}" template "${inject('templateDatabase')}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = withDatabase(serverUrl(), name);
  const sql = createSqlClient(url, { poolMax: options.poolMax ?? 10 });
  const over = databaseOver(sql);
  const database: TestDatabase = {
    ...over,
    url,
    name,
    drop: async () => {
      await over.close();
      const dropper = createSqlClient(serverUrl(), { poolMax: 1 });
      try {
        await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await dropper.end({ timeout: 5 });
      }
    },
  };
  createdDatabases.push(database);
  return database;
}

/** This test file's database, created before its tests; `set` receives it. */
export function useTestDatabase(label: string, set: (database: TestDatabase) => void, options: { migrate?: boolean; poolMax?: number } = {}): void {
  beforeAll(async () => {
    set(await createTestDatabase(label, options));
  });
}
