import { lstat, mkdir, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Shutdown } from '../lifecycle/shutdown.js';
import type { Logger } from '../log/logger.js';
import { isTransientDatabaseError } from '../db/errors.js';
import { FileChangedError, type ImportResult } from './import.js';
import { ImportLedgerStalledError, ImportStoppedError } from './isolated-import.js';
import { importStatementAsDaemon } from './daemon-import.js';
import { csvSettings } from './csv-settings.js';
import type { CsvOptions } from './csv.js';
import type { StatementMetrics } from './metrics.js';
import { startJob } from '../jobs/job.js';

export interface InboxRunResult<R = ImportResult> {
  imported: R[];
  failed: { file: string; error: string }[];
  /** left for a later tick: still being written, or the database failed */
  deferred: string[];
}

export interface StatementInbox<R = ImportResult> {
  dir: string;
  /** One scan now, after any scan in flight. */
  runNow(): Promise<InboxRunResult<R>>;
  /** Stops the loop and waits for a scan in flight. Idempotent. */
  stop(): Promise<void>;
}

export interface InboxOptions {
  /** between scans; default 60 s */
  intervalMs?: number;
  /** a file modified more recently than this is still being written; default 5 s */
  settleMs?: number;
}

// Names written to while a copy is in progress, then renamed: .filepart is WinSCP's.
// A `.error` file is written in failed/ only: one dropped in the inbox is a file like any other
// (ignored, it stayed there unread and unsaid).
const IGNORED = /^\.|\.(tmp|part|partial|filepart|crdownload|swp)$/i;

/** What an inbox of files does with each one (startFileInbox): statements here, payout reports in payout-reports/. */
export interface FileInboxKind<R> {
  /** the job's name and the log component */
  name: string;
  /** RECON_DATA_DIR/<folder> */
  folder: string;
  /**
   * Before each scan: false leaves every file in place for the next scan (a setting the imports
   * need is broken, not the files); it logs why.
   */
  beginScan?(log: Logger): Promise<boolean>;
  importOne(file: string, name: string): Promise<R>;
  /** a reason to leave the file in place for the next scan (besides an unreachable database), else undefined */
  deferReason?(error: unknown): string | undefined;
  /** after a file was imported and moved to imported/ */
  imported?(result: R, name: string): void;
}

/**
 * The statement inbox: every minute, each file in RECON_DATA_DIR/inbox is imported and moved to
 * inbox/imported/, or to inbox/failed/ with a <name>.error beside it holding the reason when it
 * failed (not a statement, unbalanced unless STATEMENT_ACCEPT_UNBALANCED, refused by the stored-totals check, or anything else): such
 * a file would fail the same way every minute. Only a failure to reach the database
 * (db/errors.ts isTransientDatabaseError), or a file that changed while it was read, leaves the
 * file where it is for the next scan; a file that cannot even be moved aside is remembered (by
 * name, size and time) and not tried again. Files modified in the last few seconds are left
 * alone (a copy in progress), as are dot files and .tmp/.part names (write there, then rename).
 * Scans never overlap; two replicas sharing the directory may both import one file
 * (the import is idempotent) and one of them finds it gone when moving it, which is fine. A file
 * imported but not movable to imported/ counts as imported and is not imported again while it
 * stays unchanged. A name that is not UTF-8 (a Latin-1 'M\xE4rz' from a Windows share or a zip) is
 * renamed in place to its name with the odd bytes escaped ('M%E4rz'), then imported.
 *
 * Whoever can write the inbox (often a file-transfer account) must not reach outside it: only
 * regular files are imported, opened without following a symlink (import.ts fileSource); symlinks,
 * pipes, sockets, devices and folders are skipped with a warning (once per name, while it stays);
 * imported/ and failed/ are checked to be real directories before each move (a symlink in their
 * place is removed and the directory re-created), and a .error file is only ever created new,
 * never written through an existing name.
 */
/** What the inbox needs from the composition root. */
export interface InboxContext {
  config: Config;
  log: Logger;
  database: Database;
  shutdown: Pick<Shutdown, 'signal'>;
  metrics: { statements: StatementMetrics };
}

export function startStatementInbox(
  ctx: InboxContext,
  options: InboxOptions & {
    /** the daemon's receiver: imports store at a pace its commits tolerate (store-pipeline.ts RECEIVER_PACE) */
    receiver?: { commitPressureMs(): number };
  } = {},
): StatementInbox {
  const metrics = ctx.metrics.statements;
  let csv: CsvOptions = {};
  const inbox = startFileInbox(ctx, {
    name: 'statement-inbox',
    folder: 'inbox',
    // Read at each scan, so a corrected profile file is taken without a restart; while it is broken,
    // files wait in the inbox (they are not at fault).
    beginScan: async (log) => {
      try {
        csv = await csvSettings(ctx.config);
        return true;
      } catch (error) {
        log.error({ err: error }, 'STATEMENT_CSV_PROFILE cannot be used: statements wait in the inbox until it is corrected');
        return false;
      }
    },
    importOne: (file, name) => importStatementAsDaemon({ config: ctx.config, database: ctx.database, signal: ctx.shutdown.signal, receiver: options.receiver }, file, name, csv),
    deferReason: (error) => {
      if (error instanceof FileChangedError) return 'statement changed while it was read; retried at the next scan';
      if (error instanceof ImportStoppedError) return 'statement import stopped by shutdown; retried at the next start';
      if (error instanceof ImportLedgerStalledError) return `statement import held by the ledger: ${error.message}; retried at the next scan`;
      return undefined;
    },
    imported: (imported, name) =>
      ctx.log.child({ component: 'statement-inbox' }).info(
        { file: name, format: imported.format, statements: imported.statements, linesRead: imported.linesRead, linesNew: imported.linesNew,
          linesKnown: imported.linesKnown, linesOverlap: imported.linesOverlap, balancesUnchecked: imported.balancesUnchecked,
          statementsUnbalanced: imported.statementsUnbalanced, unbalancedFindings: imported.unbalancedFindings, peakRssMb: imported.peakRssMb },
        'statement imported',
      ),
  }, options, (result) => {
    for (const r of result.imported) {
      metrics.inboxFiles.inc({ outcome: r.alreadyImported ? 'already_imported' : 'imported' });
      metrics.linesImported.inc(r.linesNew);
    }
    metrics.inboxFiles.inc({ outcome: 'failed' }, result.failed.length);
    metrics.inboxFiles.inc({ outcome: 'deferred' }, result.deferred.length);
  });
  return inbox;
}

/**
 * An inbox folder under RECON_DATA_DIR scanned on an interval, as startStatementInbox describes:
 * each settled file imported by `kind` and moved to imported/, or to failed/ with its reason.
 */
export function startFileInbox<R>(
  ctx: { config: Pick<Config, 'RECON_DATA_DIR'>; log: Logger; shutdown: Pick<Shutdown, 'signal'> },
  kind: FileInboxKind<R>,
  options: InboxOptions = {},
  afterScan?: (result: InboxRunResult<R>) => void,
): StatementInbox<R> {
  const dir = path.resolve(ctx.config.RECON_DATA_DIR, kind.folder);
  const intervalMs = options.intervalMs ?? 60_000;
  const settleMs = options.settleMs ?? 5_000;
  const log = ctx.log.child({ component: kind.name });
  const stuck = new Set<string>();
  const skipped = new Map<string, string>();
  const settledAhead = new Map<string, string>();
  const ready = mkdir(dir, { recursive: true });

  const job = startJob({
    name: kind.name,
    schedule: { everyMs: intervalMs },
    // The first scan right away, so files dropped while the daemon was down are not left a minute.
    runAtStart: true,
    log,
    stopOn: ctx.shutdown.signal,
    run: async () => {
      await ready;
      for (const folder of SUBFOLDERS) await ensureFolder(path.join(dir, folder), log);
      const result = await scan(kind, dir, settleMs, log, stuck, skipped, settledAhead);
      afterScan?.(result);
      return result;
    },
  });
  log.info({ dir, intervalMs }, `${kind.name} watching`);
  return { dir, runNow: () => job.runNow(), stop: () => job.stop() };
}

async function scan<R>(
  kind: FileInboxKind<R>,
  dir: string,
  settleMs: number,
  log: Logger,
  stuck: Set<string>,
  skipped: Map<string, string>,
  settledAhead: Map<string, string>,
): Promise<InboxRunResult<R>> {
  const result: InboxRunResult<R> = { imported: [], failed: [], deferred: [] };
  // Names as bytes: a name that is not UTF-8 (Latin-1 "M\xE4rz" from an SMB share or a zip) read as
  // a string comes back with U+FFFD, a name no file has, and lstat of it says ENOENT.
  const entries = (await readdir(dir, { withFileTypes: true, encoding: 'buffer' })).map((entry) => {
    const name = utf8Name(entry.name);
    return { entry, raw: entry.name, name: name ?? escapedName(entry.name), utf8: name !== undefined };
  });
  if (kind.beginScan && !(await kind.beginScan(log))) {
    result.deferred.push(...entries.filter((e) => e.entry.isFile() && !IGNORED.test(e.name)).map((e) => e.name));
    return result;
  }
  const present = new Set(entries.map((e) => e.name));
  for (const name of skipped.keys()) if (!present.has(name)) skipped.delete(name);
  for (const name of settledAhead.keys()) if (!present.has(name)) settledAhead.delete(name);
  for (const { entry, raw, utf8, name } of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (IGNORED.test(name)) continue;
    if (!entry.isFile()) {
      const what = kindOf(entry, name);
      if (what !== undefined && skipped.get(name) !== what) {
        skipped.set(name, what);
        log.warn({ file: name, kind: what }, `inbox: skipped ${what}: only regular files are imported`);
      }
      continue;
    }
    skipped.delete(name);
    const file = path.join(dir, name);
    let seen = '';
    let stored = false;
    let current: Stats | undefined;
    try {
      const info = await lstat(utf8 ? file : Buffer.concat([Buffer.from(`${dir}${path.sep}`), raw]));
      current = info;
      // Replaced by something else since the listing: looked at again at the next scan.
      if (!info.isFile()) continue;
      seen = `${name}\n${info.size}\n${info.mtimeMs}`;
      if (stuck.has(seen)) continue;
      // mtimeMs has a fraction of a millisecond and Date.now() none: a file written in this very
      // millisecond looked newer than now, and with settleMs 0 was left for the next scan.
      const age = Date.now() - Math.floor(info.mtimeMs);
      if (age < 0) {
        // A time ahead of this clock is no sign of a copy in progress: a file unzipped from a bank's
        // ZIP (local times, no zone) or copied with its times from a host whose clock runs ahead.
        // Such a file waited, unsaid, until the clock reached its time. It is settled once its size
        // and time stayed the same from one scan to the next.
        if (settledAhead.get(name) !== seen) {
          settledAhead.set(name, seen);
          result.deferred.push(name);
          log.warn({ file: name, modifiedAt: new Date(info.mtimeMs).toISOString() }, 'inbox: file modified in the future (by this clock): imported once it is unchanged at the next scan');
          continue;
        }
      } else if (age < settleMs) {
        result.deferred.push(name);
        continue;
      }
      settledAhead.delete(name);
      if (!utf8) {
        // Renamed in place to its name with the odd bytes escaped (%E4), which the import records
        // and the logs show; never over a file already there (then left, with an error logged once).
        const renamed = await renameUnlessTaken(Buffer.concat([Buffer.from(`${dir}${path.sep}`), raw]), file);
        if (renamed === 'gone') continue;
        if (renamed === 'taken') {
          stuck.add(seen);
          log.error({ file: name }, 'inbox: file name not valid UTF-8 and its escaped name is taken: left in place, not tried again until it changes; rename either file');
          continue;
        }
        log.warn({ file: name }, 'inbox: file name not valid UTF-8: renamed with its odd bytes escaped');
      }
      const imported = await kind.importOne(file, name);
      stored = true;
      result.imported.push(imported);
      kind.imported?.(imported, name);
      // Only the file that was imported is moved: one renamed over its name meanwhile (the next
      // statement, written as NAME.part and renamed) went to imported/ unread.
      if (await replacedSince(file, info)) {
        log.warn({ file: name }, 'imported; another file took its name meanwhile: that one is left for the next scan');
        continue;
      }
      await moveAside(file, path.join(dir, 'imported'), log);
    } catch (error) {
      if (stored) {
        // Stored in the ledger: counted imported whatever becomes of the file, and not imported
        // again while it stays (by name, size and time) though the import would add nothing.
        stuck.add(seen);
        log.error({ err: error, file: name }, 'imported, not movable to imported/: left in place, not imported again until it changes');
        continue;
      }
      if (isGone(error)) continue;
      const deferred = kind.deferReason?.(error);
      if (deferred !== undefined) {
        result.deferred.push(name);
        log.warn({ file: name }, deferred);
        continue;
      }
      if (isTransientDatabaseError(error)) {
        result.deferred.push(name);
        log.error({ err: error, file: name }, 'import failed: database unavailable; retried at the next scan');
        continue;
      }
      const reason = error instanceof Error ? error.message : String(error);
      if (current !== undefined && (await regularFileReplacedSince(file, current))) {
        // The reason may be the other file's: the one there now is judged at the next scan (a
        // symlink or pipe swapped in is what the import refused, and goes to failed/ below).
        result.deferred.push(name);
        log.warn({ file: name, reason }, 'not imported; another file took its name meanwhile: that one is left for the next scan');
        continue;
      }
      let target: string | null;
      try {
        target = await moveAside(file, path.join(dir, 'failed'), log);
      } catch (moveError) {
        result.failed.push({ file: name, error: reason });
        if (seen) stuck.add(seen);
        log.error({ err: moveError, file: name, reason }, 'not imported and not movable to failed/: left in place, not retried until it changes');
        continue;
      }
      // Gone before it could be moved: another replica sharing the inbox moved it (and counts it).
      if (target === null) continue;
      result.failed.push({ file: name, error: reason });
      try {
        // 'wx': created new or not at all, so a name placed there beforehand (a symlink) is never written through.
        await writeFile(`${target}.error`, `${reason}\n`, { encoding: 'utf8', flag: 'wx' });
        log.warn({ file: name, reason }, 'not imported: moved to failed/');
      } catch (writeError) {
        log.error({ err: writeError, file: name, reason }, 'not imported: moved to failed/, but its .error file could not be written: the reason is in this line only');
      }
    }
  }
  return result;
}

/**
 * Whether the file at `file` is no longer the one `before` describes: another file (another inode)
 * took its name, or it was written to (size or time). Gone counts as replaced: there is nothing to move.
 */
async function replacedSince(file: string, before: Stats): Promise<boolean> {
  try {
    const now = await lstat(file);
    return now.dev !== before.dev || now.ino !== before.ino || now.size !== before.size || now.mtimeMs !== before.mtimeMs;
  } catch (error) {
    if (isGone(error)) return true;
    throw error;
  }
}

/** Whether another regular file (another inode) holds the name now; false when none does, or on an error. */
async function regularFileReplacedSince(file: string, before: Stats): Promise<boolean> {
  try {
    const now = await lstat(file);
    return now.isFile() && (now.dev !== before.dev || now.ino !== before.ino);
  } catch {
    return false;
  }
}

/** The name as a string when its bytes are UTF-8, else undefined. */
function utf8Name(raw: Buffer): string | undefined {
  const name = raw.toString('utf8');
  return Buffer.from(name, 'utf8').equals(raw) ? name : undefined;
}

/**
 * The name with each byte that is not part of a UTF-8 character written %XX (and '%' itself as
 * %25, so the escaped name spells the bytes): 'Kontoauszug_M\xE4rz.csv' -> 'Kontoauszug_M%E4rz.csv'.
 */
export function escapedName(raw: Buffer): string {
  let out = '';
  for (let i = 0; i < raw.length; ) {
    const lead = raw[i]!;
    const n = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    const char = n > 0 && i + n <= raw.length ? utf8Name(raw.subarray(i, i + n)) : undefined;
    if (char === undefined) {
      out += `%${lead.toString(16).toUpperCase().padStart(2, '0')}`;
      i += 1;
    } else {
      out += char === '%' ? '%25' : char;
      i += n;
    }
  }
  return out;
}

/** rename(from, to) unless `to` exists. */
async function renameUnlessTaken(from: Buffer, to: string): Promise<'renamed' | 'taken' | 'gone'> {
  if (await exists(to)) return 'taken';
  try {
    await rename(from, to);
    return 'renamed';
  } catch (error) {
    if (isGone(error)) return 'gone';
    throw error;
  }
}

const SUBFOLDERS = ['imported', 'failed'] as const;

/** What a skipped inbox entry is, for its log line; undefined for the inbox's own subfolders. */
function kindOf(entry: Dirent<Buffer>, name: string): string | undefined {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFIFO()) return 'pipe';
  if (entry.isSocket()) return 'socket';
  if (entry.isBlockDevice() || entry.isCharacterDevice()) return 'device';
  if (entry.isDirectory()) return (SUBFOLDERS as readonly string[]).includes(name) ? undefined : 'folder';
  return 'unknown entry';
}

/**
 * Makes `folder` a real directory: a symlink in its place (which would carry the inbox's files,
 * and its .error files, wherever it points) is removed and the directory re-created; anything
 * else that is not a directory is refused. Replicas sharing the inbox may do this at the same
 * moment: a folder (or its removal) that another one made between our look and our step is
 * looked at again, not an error (two replicas starting on a fresh data directory failed one's
 * scan with EEXIST).
 */
async function ensureFolder(folder: string, log: Logger): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    let info;
    try {
      info = await lstat(folder);
    } catch (error) {
      if (!isGone(error)) throw error;
      if (await madeHere(() => mkdir(folder), attempt)) return;
      continue;
    }
    if (info.isDirectory()) return;
    if (!info.isSymbolicLink()) throw new Error(`inbox: ${folder} is not a directory; move it away`);
    try {
      await unlink(folder);
    } catch (error) {
      if (!isGone(error) || attempt > 0) throw error;
    }
    if (await madeHere(() => mkdir(folder), attempt)) {
      log.warn({ folder }, 'inbox: subfolder was a symlink: removed and re-created as a directory');
      return;
    }
  }
}

/** Runs `make`; false when another process made the same name first (look again), once. */
async function madeHere(make: () => Promise<unknown>, attempt: number): Promise<boolean> {
  try {
    await make();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
    return false;
  }
}

/**
 * Moves the file into `targetDir` (checked to be a real directory first), never overwriting: a
 * name taken there, or whose .error is taken, gets a time suffix. The name is shortened (at a
 * character's end) so it, its suffix and '.error' fit NAME_MAX, 255 bytes on Linux's file systems:
 * a 240-byte name, legal in the inbox, was refused with ENAMETOOLONG once it had a suffix.
 */
async function moveAside(file: string, targetDir: string, log: Logger): Promise<string | null> {
  await ensureFolder(targetDir, log);
  const name = path.basename(file);
  let target = path.join(targetDir, fitName(name, ''));
  if ((await exists(target)) || (await exists(`${target}.error`))) {
    const suffix = `.${new Date().toISOString().replace(/[:.]/g, '-')}`;
    target = path.join(targetDir, fitName(name, suffix));
  }
  try {
    await rename(file, target);
    return target;
  } catch (error) {
    if (isGone(error)) return null;
    throw error;
  }
}

const NAME_MAX_BYTES = 255;

/** `name` + `suffix`, the name cut (at a character's end) so that with '.error' after it it fits NAME_MAX_BYTES. */
export function fitName(name: string, suffix: string): string {
  const room = NAME_MAX_BYTES - Buffer.byteLength(`${suffix}.error`);
  const bytes = Buffer.from(name, 'utf8');
  if (bytes.length <= room) return `${name}${suffix}`;
  let end = room;
  // Back to the first byte of a character (continuation bytes are 10xxxxxx).
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return `${bytes.subarray(0, end).toString('utf8')}${suffix}`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    throw error;
  }
}

function isGone(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
