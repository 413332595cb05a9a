import type { Database } from '../db/database.js';

/** How often the receiver's commits are looked at: well inside the ack deadline (3 s by default). */
const WATCH_EVERY_MS = 1000;

/**
 * Replaces the pool's connections while the receiver's commits stall past the ack deadline.
 * After a failover that leaves the connections half-open (the old primary gone without a reset
 * reaching this host) a commit waits on a silent connection until TCP gives up, ~15 min on Linux,
 * and every delivery meanwhile gets 503 (test/db/ledger-client.test.ts). The database limits the
 * replacements to one every few seconds (db/writable-host.ts). Returns the function that stops
 * watching.
 */
export function watchCommitStalls(commitStall: () => string | undefined, database: Pick<Database, 'recycle'>, everyMs = WATCH_EVERY_MS): () => void {
  const timer = setInterval(() => {
    const stall = commitStall();
    if (stall) database.recycle(stall);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
