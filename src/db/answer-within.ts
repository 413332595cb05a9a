/**
 * What `work` settles to, or what `onTimeout` returns (or throws) when it has not settled within
 * `ms`. A query on a connection that went silent (a failover that left it half-open) never settles
 * by itself: TCP gives up after ~15 min on Linux, and no socket option of postgres.js bounds a
 * query's wait. Every check that must decide in time whether the ledger answers (readiness, the
 * lock heartbeat, the scrape's reads, the stall and stop probes) waits through this.
 *
 * The timer never keeps the process alive and is cleared as soon as the work settles; `work`
 * settling after the deadline is ignored, its rejection included (never an unhandled rejection).
 */
export function answerWithin<T, F>(work: Promise<T>, ms: number, onTimeout: () => F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<F>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error as Error);
      }
    }, ms);
    timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
