import { mkdir, readdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Shutdown } from '../lifecycle/shutdown.js';
import type { Logger } from '../log/logger.js';
import { isTransientDatabaseError } from '../db/errors.js';
import { FileChangedError, fileSource, importLimits, importStatementSource, type ImportResult } from './import.js';
import { ImportStoppedError, importInChildProcess } from './isolated-import.js';
import { csvSettings } from './csv-settings.js';
import type { CsvOptions } from './csv.js';
import type { StatementMetrics } from './metrics.js';
import { startJob } from '../jobs/job.js';

export interface InboxRunResult {
  imported: ImportResult[];
  failed: { file: string; error: string }[];
  /** left for a later tick: still being written, or the database failed */
  deferred: string[];
}

export interface StatementInbox {
  dir: string;
  /** One scan now, after any scan in flight. */
  runNow(): Promise<InboxRunResult>;
  /** Stops the loop and waits for a scan in flight. Idempotent. */
  stop(): Promise<void>;
}

export interface InboxOptions {
  /** between scans; default 60 s */
  intervalMs?: number;
  /** a file modified more recently than this is still being written; default 5 s */
  settleMs?: number;
}

const IGNORED = /^\.|\.(tmp|part|partial|crdownload|swp)$|\.error$/i;

/**
 * The statement inbox: every minute, each file in RECON_DATA_DIR/inbox is imported and moved to
 * inbox/imported/, or to inbox/failed/ with a <name>.error beside it holding the reason when it
 * failed (not a statement, unbalanced, refused by the stored-totals check, or anything else): such
 * a file would fail the same way every minute. Only a failure to reach the database
 * (db/errors.ts isTransientDatabaseError), or a file that changed while it was read, leaves the
 * file where it is for the next scan; a file that cannot even be moved aside is remembered (by
 * name, size and time) and not tried again. Files modified in the last few seconds are left
 * alone (a copy in progress), as are dot files and .tmp/.part names (write there, then rename).
 * Scans never overlap; two replicas sharing the directory may both import one file
 * (the import is idempotent) and one of them finds it gone when moving it, which is fine.
 */
/** What the inbox needs from the composition root. */
export interface InboxContext {
  config: Config;
  log: Logger;
  database: Database;
  shutdown: Pick<Shutdown, 'signal'>;
  metrics: { statements: StatementMetrics };
}

export function startStatementInbox(ctx: InboxContext, options: InboxOptions = {}): StatementInbox {
  const metrics = ctx.metrics.statements;
  const dir = path.resolve(ctx.config.RECON_DATA_DIR, 'inbox');
  const intervalMs = options.intervalMs ?? 60_000;
  const settleMs = options.settleMs ?? 5_000;
  const log = ctx.log.child({ component: 'statement-inbox' });
  const stuck = new Set<string>();
  const ready = mkdir(path.join(dir, 'imported'), { recursive: true }).then(() => mkdir(path.join(dir, 'failed'), { recursive: true }));

  const job = startJob({
    name: 'statement-inbox',
    schedule: { everyMs: intervalMs },
    // The first scan right away, so files dropped while the daemon was down are not left a minute.
    runAtStart: true,
    log,
    stopOn: ctx.shutdown.signal,
    run: async () => {
      await ready;
      const result = await scan(ctx, dir, settleMs, log, stuck);
      for (const r of result.imported) {
        metrics.inboxFiles.inc({ outcome: r.alreadyImported ? 'already_imported' : 'imported' });
        metrics.linesImported.inc(r.linesNew);
      }
      metrics.inboxFiles.inc({ outcome: 'failed' }, result.failed.length);
      metrics.inboxFiles.inc({ outcome: 'deferred' }, result.deferred.length);
      return result;
    },
  });
  log.info({ dir, intervalMs }, 'statement inbox watching');
  return { dir, runNow: () => job.runNow(), stop: () => job.stop() };
}

async function scan(
  ctx: Omit<InboxContext, 'log' | 'metrics'>,
  dir: string,
  settleMs: number,
  log: Logger,
  stuck: Set<string>,
): Promise<InboxRunResult> {
  const result: InboxRunResult = { imported: [], failed: [], deferred: [] };
  const entries = await readdir(dir, { withFileTypes: true });
  // Read at each scan, so a corrected profile file is taken without a restart; while it is broken,
  // files wait in the inbox (they are not at fault).
  let csv: CsvOptions;
  try {
    csv = await csvSettings(ctx.config);
  } catch (error) {
    log.error({ err: error }, 'STATEMENT_CSV_PROFILE cannot be used: statements wait in the inbox until it is corrected');
    result.deferred.push(...entries.filter((e) => e.isFile() && !IGNORED.test(e.name)).map((e) => e.name));
    return result;
  }
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!entry.isFile() || IGNORED.test(entry.name)) continue;
    const file = path.join(dir, entry.name);
    let seen = '';
    try {
      const info = await stat(file);
      seen = `${entry.name}\n${info.size}\n${info.mtimeMs}`;
      if (stuck.has(seen)) continue;
      if (Date.now() - info.mtimeMs < settleMs) {
        result.deferred.push(entry.name);
        continue;
      }
      const imported = await importOne(ctx, file, entry.name, csv);
      await moveAside(file, path.join(dir, 'imported'));
      result.imported.push(imported);
      log.info(
        { file: entry.name, format: imported.format, statements: imported.statements, linesRead: imported.linesRead, linesNew: imported.linesNew,
          linesKnown: imported.linesKnown, linesOverlap: imported.linesOverlap, peakRssMb: imported.peakRssMb },
        'statement imported',
      );
    } catch (error) {
      if (isGone(error)) continue;
      if (error instanceof FileChangedError) {
        result.deferred.push(entry.name);
        log.warn({ file: entry.name }, 'statement changed while it was read; retried at the next scan');
        continue;
      }
      if (error instanceof ImportStoppedError) {
        result.deferred.push(entry.name);
        log.info({ file: entry.name }, 'statement import stopped by shutdown; retried at the next start');
        continue;
      }
      if (isTransientDatabaseError(error)) {
        result.deferred.push(entry.name);
        log.error({ err: error, file: entry.name }, 'statement import failed: database unavailable; retried at the next scan');
        continue;
      }
      const reason = error instanceof Error ? error.message : String(error);
      result.failed.push({ file: entry.name, error: reason });
      try {
        const target = await moveAside(file, path.join(dir, 'failed'));
        if (target) await writeFile(`${target}.error`, `${reason}\n`, 'utf8');
        log.warn({ file: entry.name, reason }, 'statement not imported: moved to failed/');
      } catch (moveError) {
        if (seen) stuck.add(seen);
        log.error({ err: moveError, file: entry.name, reason }, 'statement not imported and not movable to failed/: left in place, not retried until it changes');
      }
    }
  }
  return result;
}

/**
 * One file's import: in a child process with its own heap limit and time limit when the ledger's
 * address is known (DATABASE_URL, or the embedded server this process started), so a huge or
 * hostile file cannot stall or kill the daemon (isolated-import.ts); in this process otherwise.
 */
function importOne(ctx: Omit<InboxContext, 'log' | 'metrics'>, file: string, name: string, csv: CsvOptions): Promise<ImportResult> {
  const limits = importLimits(ctx.config);
  const databaseUrl = ctx.config.DATABASE_URL ?? ctx.database.embeddedUrl;
  if (databaseUrl === undefined) return importStatementSource(ctx.database, ctx.config.PROVIDER_ENV, fileSource(file), name, { ...limits, csv });
  return importInChildProcess(
    { databaseUrl, environment: ctx.config.PROVIDER_ENV, file, name, maxFileBytes: ctx.config.STATEMENT_MAX_FILE_BYTES, maxAmountCents: String(limits.maxAmountCents), csv },
    { maxMemoryMb: ctx.config.STATEMENT_IMPORT_MAX_MEMORY_MB, timeoutMs: ctx.config.STATEMENT_IMPORT_TIMEOUT_SECONDS * 1000, signal: ctx.shutdown.signal },
  );
}

/** Moves the file into `targetDir`, never overwriting: a second file of the same name gets a time suffix. */
async function moveAside(file: string, targetDir: string): Promise<string | null> {
  const name = path.basename(file);
  let target = path.join(targetDir, name);
  try {
    await stat(target);
    target = path.join(targetDir, `${name}.${new Date().toISOString().replace(/[:.]/g, '-')}`);
  } catch {
    // free
  }
  try {
    await rename(file, target);
    return target;
  } catch (error) {
    if (isGone(error)) return null;
    throw error;
  }
}

function isGone(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
