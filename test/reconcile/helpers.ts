import { afterAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * A fresh database per test (the rules look at the whole environment, so tests sharing one would see
 * each other's poll runs). Dropped at the end only if every test using it passed; kept otherwise.
 */
export function databasePerTest(label: string): (fn: (db: TestDatabase) => Promise<void>) => () => Promise<void> {
  const kept: TestDatabase[] = [];
  const dropped: Promise<void>[] = [];
  afterAll(async () => {
    await Promise.all(dropped);
    await Promise.all(kept.map((db) => db.close()));
  });
  return (fn) => async () => {
    const db = await createTestDatabase(label, { poolMax: 4 });
    try {
      await fn(db);
    } catch (error) {
      kept.push(db);
      throw error;
    }
    dropped.push(db.drop());
  };
}
