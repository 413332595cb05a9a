import { answerWithin } from '../db/answer-within.js';
import type { Database } from '../db/database.js';
import type { Shutdown } from '../lifecycle/shutdown.js';
import type { Logger } from '../log/logger.js';

/** A stop on a ledger that answers is mostly done by then, and never asks. */
const ASK_AFTER_MS = 1000;
/** As the readiness check's bound (http/health.ts): a ledger that answers does so well inside it. */
const ANSWER_WITHIN_MS = 2000;
const ASK_EVERY_MS = 2000;

/**
 * Gives up the work waiting on the ledger when a stop finds the ledger silent. A primary frozen or
 * partitioned away leaves every connection half-open (no answer, no reset): the pass's statement,
 * its lock's session and the receiver's commit wait until TCP gives up, ~15 min on Linux, and the
 * stop waited for them until SHUTDOWN_TIMEOUT_MS, then exited 1, naming every component behind the
 * pass as not stopped (test/lifecycle/sigterm-during-half-open-outage.test.ts). None of that work
 * can finish, and none of it was acknowledged: a delivery gets its 2xx only after its commit
 * returned, so one whose commit waits is answered 503 and sent again by the provider; a pass or a
 * poll cut short is closed as failed or aborted by the next leader and runs again. So once the stop
 * has run for a second, the ledger is asked for an answer on a new session, every 2 s; when none
 * comes within 2 s every connection is ended at once (Database.endNow), the waiting components fail
 * and stop, and the stop completes: exit 0, as for any stop (docs/operating.md).
 *
 * A ledger that answers new sessions while old connections stay silent (a failover behind one
 * address) is left to what handles it while running: the pool's replacement for a stall
 * (db/writable-host.ts) and the lock heartbeat (jobs/session-lock.ts).
 *
 * Returns the function that stops watching.
 */
export function giveUpSilentLedgerOnStop(shutdown: Pick<Shutdown, 'stopping'>, database: Pick<Database, 'sessions' | 'endNow'>, log: Logger): () => void {
  let watching = true;
  const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
  void (async () => {
    await shutdown.stopping();
    await wait(ASK_AFTER_MS);
    while (watching) {
      const answered = await ledgerAnswers(database, ANSWER_WITHIN_MS);
      if (!watching) return;
      if (!answered) {
        log.warn(
          { answerWithinMs: ANSWER_WITHIN_MS },
          'shutdown: the database does not answer; giving up the work waiting on it (none of it was acknowledged: deliveries waiting for their commit are answered 503)',
        );
        database.endNow();
        return;
      }
      await wait(ASK_EVERY_MS);
    }
  })();
  return () => {
    watching = false;
  };
}

/**
 * Whether the server answers `select 1` on a new session within `withinMs`. An error the server
 * itself sends (postgres.js's PostgresError, with its SQLSTATE) is an answer too: a server that
 * refuses the session for `too many clients` (53300) or while it starts up is alive, and ending
 * the connections then would only fail the receiver's commits that were about to return.
 */
async function ledgerAnswers(database: Pick<Database, 'sessions'>, withinMs: number): Promise<boolean> {
  const { session } = database.sessions.take({ fresh: true });
  try {
    const answer = session`select 1`.then(
      () => true,
      (error: unknown) => error instanceof Error && error.name === 'PostgresError',
    );
    return await answerWithin(answer, withinMs, () => false);
  } finally {
    void database.sessions.discard(session);
  }
}
