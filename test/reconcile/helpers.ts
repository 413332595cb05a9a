import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * A fresh database per test (the rules look at the whole environment, so tests sharing one would see
 * each other's poll runs). Dropped as soon as its test passed, so a file of many tests does not hold
 * a pool per test; after a failure, the isolation setup file keeps it with the file's others.
 */
export function databasePerTest(label: string): (fn: (db: TestDatabase) => Promise<void>) => () => Promise<void> {
  return (fn) => async () => {
    const db = await createTestDatabase(label, { poolMax: 4 });
    await fn(db);
    await db.drop();
  };
}
