/**
 * Keeps the process alive through one known defect of postgres.js 3.4.9 (porsager/postgres#1154,
 * #1066, #1208; the fixes #1168 and #1176 are not released, and 3.4.10 does not have them): a
 * small write is flushed from a setImmediate, and when the connection closed before it runs the
 * flush reads `socket.write` of null. The TypeError is thrown from the timer, outside every
 * promise, and ends the process. db/transaction.ts keeps the one path of ours known to lead there
 * (the ROLLBACK after a lost connection) off it; a daemon replica still exited so once in CI, at
 * the SIGKILL of the primary in test/e2e/failover.ts, by a path not found. A failover must not end
 * the daemon: the connection is gone, its query was already failed as a lost connection, and the
 * write it threw on is moot.
 *
 * What the throw leaves behind is the connection's unflushed bytes and its write timer, so its
 * next writes would never be sent: `onDefect` replaces the ledger's connections (Database.recycle).
 * Every other uncaught exception ends the process as it would without this handler: on stderr,
 * exit status 1. Returns the function that removes the handler.
 */
export function surviveNullSocketWrite(onDefect: (error: Error) => void): () => void {
  const handler = (error: unknown) => {
    if (isNullSocketWrite(error)) {
      onDefect(error);
      return;
    }
    // Not ours to judge: uncaught as before, once this handler is gone.
    process.removeListener('uncaughtException', handler);
    process.nextTick(() => {
      throw error;
    });
  };
  process.on('uncaughtException', handler);
  return () => void process.removeListener('uncaughtException', handler);
}

/** The TypeError of postgres.js's flush of a closed connection, told by its message and its first frame. */
export function isNullSocketWrite(error: unknown): error is TypeError {
  if (!(error instanceof TypeError) || error.message !== "Cannot read properties of null (reading 'write')") return false;
  const firstFrame = (error.stack ?? '').split('\n').find((line) => /^\s+at /.test(line)) ?? '';
  return /^\s+at (?:Immediate\.)?nextWrite \([^()]*[\\/]postgres[\\/](?:cjs[\\/])?src[\\/]connection\.js:\d+:\d+\)$/.test(firstFrame);
}
