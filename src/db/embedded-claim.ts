import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log/logger.js';
import { EmbeddedPostgresError } from './embedded-errors.js';

/**
 * The pointer file in a data directory while an embedded Postgres runs there: who started it, on
 * which port, and where its files are. Created exclusively, so two processes can never both own one
 * data directory (the second is refused, naming the first); other commands read it to reach the
 * running ledger instead of starting an empty one of their own.
 */
export const POINTER_FILE = 'embedded-postgres.json';

export interface EmbeddedPointer {
  ownerPid: number;
  owner: string;
  databaseDir: string;
  port?: number;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function readPointer(dataDir: string): Promise<EmbeddedPointer | undefined> {
  try {
    return JSON.parse(await readFile(path.join(dataDir, POINTER_FILE), 'utf8')) as EmbeddedPointer;
  } catch {
    return undefined;
  }
}

/** The postmaster's pid from its lock file, when that process is alive. */
export async function livePostmaster(databaseDir: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(path.join(databaseDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stops a postmaster whose owner died (a `kill -9` of the demo leaves it running): fast shutdown
 * first, then immediate, then kill, so its directory can be reused or removed safely.
 */
export async function stopOrphan(databaseDir: string, log: Logger): Promise<void> {
  const pid = await livePostmaster(databaseDir);
  if (pid === undefined) return;
  log.warn({ pid, databaseDir }, 'stopping an orphaned embedded Postgres left running by a process that is gone');
  for (const [signal, waitMs] of [['SIGINT', 15_000], ['SIGQUIT', 5_000], ['SIGKILL', 5_000]] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    for (let waited = 0; waited < waitMs; waited += 100) {
      if (!isAlive(pid)) return;
      await sleep(100);
    }
  }
  throw new EmbeddedPostgresError(`an orphaned embedded Postgres (pid ${pid}) in ${databaseDir} did not stop; stop it by hand`);
}

export interface Claim {
  /** Records the port once the server is up. */
  publish(port: number): Promise<void>;
  release(): Promise<void>;
}

/**
 * Takes the data directory for this process. A live owner means refusal; a dead owner's pointer is
 * stale: its orphaned server is stopped and the directory taken over.
 */
export async function claimDataDir(dataDir: string, databaseDir: string, owner: string, log: Logger): Promise<Claim> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, POINTER_FILE);
  const pointer: EmbeddedPointer = { ownerPid: process.pid, owner, databaseDir };
  for (let attempt = 0; attempt < 5; attempt += 1) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(JSON.stringify(pointer));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const existing = await readPointer(dataDir);
      if (existing && existing.ownerPid !== process.pid && isAlive(existing.ownerPid)) {
        throw new EmbeddedPostgresError(
          `the embedded ledger in ${path.resolve(dataDir)} is in use by process ${existing.ownerPid} (${existing.owner}): stop it first, or point RECON_DATA_DIR elsewhere`,
        );
      }
      if (existing) await stopOrphan(existing.databaseDir, log);
      await rm(file, { force: true });
    }
    if (attempt === 4) throw new EmbeddedPostgresError(`could not take ${file}`);
  }
  // Nobody owns the directory now; a postmaster still running there is an orphan.
  await stopOrphan(databaseDir, log);
  return {
    async publish(port) {
      const staging = `${file}.tmp-${process.pid}`;
      await writeFile(staging, JSON.stringify({ ...pointer, port }), { mode: 0o600 });
      await rename(staging, file);
    },
    async release() {
      const current = await readPointer(dataDir);
      if (current?.ownerPid === process.pid) await rm(file, { force: true });
    },
  };
}
