import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Fails a file that leaves servers, child processes or sockets open; drops the file's test
    // databases when its tests passed, keeps them when one failed (see each file).
    setupFiles: ['test/helpers/open-resources.ts', 'test/helpers/database-isolation.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
