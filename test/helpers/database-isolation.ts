import { afterAll, type RunnerTask } from 'vitest';
import { createdDatabases } from './database.js';

/**
 * The one isolation rule for test databases (test/helpers/database.ts): after a file's own
 * afterAll hooks (vitest runs after-hooks in reverse, and this setup file registers first), every
 * database the file created is dropped when all its tests and hooks passed, and closed but kept
 * when one failed, so a failure leaves its rows to inspect (the database's URL is printed).
 * Listed after open-resources.ts, so it runs before that file's check of open sockets.
 */
function failedWithin(task: RunnerTask): boolean {
  if (task.result?.state === 'fail' || (task.result?.errors?.length ?? 0) > 0) return true;
  return 'tasks' in task && task.tasks.some(failedWithin);
}

// The hook context must be destructured (vitest parses it for fixtures); the file is the second argument.
afterAll(async ({}, file) => {
  const keep = failedWithin(file as RunnerTask);
  // A database a test already dropped is dropped again as a no-op (drop database if exists); each
  // drop waits for Postgres's checkpoint, so they run side by side.
  await Promise.all(
    createdDatabases.splice(0).map(async (database) => {
      if (!keep) return database.drop();
      await database.close();
      console.warn(`test database kept for inspection: ${database.url}`);
    }),
  );
});
