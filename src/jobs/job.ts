import { Cron } from 'croner';
import { CRON_OPTIONS } from '../config/schema.js';
import type { Logger } from '../log/logger.js';

export interface JobOptions<T> {
  /** For logs and the skipped-ticks metric: "poll", "reconcile", "statement-inbox". */
  name: string;
  /** A cron expression in UTC (a sixth, leading field is seconds), or an interval in ms. */
  schedule: string | { everyMs: number };
  log: Logger;
  /** The work; `signal` aborts on stop (and whatever the job adds, such as a lost lock). */
  run(signal: AbortSignal): Promise<T>;
  /** Run once at start, then on the schedule (interval schedules only). */
  runAtStart?: boolean;
  /**
   * Stops the job when it aborts (the context's shutdown signal): the composition root still
   * registers `stop` to wait for it in order, and a caller without one still gets it stopped.
   */
  stopOn?: AbortSignal;
  /** Counts a tick that did not run, by reason ('overlap'). */
  onSkipped?: (reason: 'overlap') => void;
}

export interface Job<T> {
  /** A scheduled tick: runs now unless a run is in flight (then skipped and counted). */
  tick(): Promise<T | undefined>;
  /** A run on demand whose caller wants a run over data it just wrote: queued behind one in flight. */
  runNow(): Promise<T>;
  /** Stops the schedule, aborts a run in flight and waits for it. Idempotent. */
  stop(): Promise<void>;
}

/**
 * One shape for every periodic thing the daemon does. Runs never overlap in this process (a tick
 * that finds one running is skipped and counted, not queued: the running one already covers the
 * work, and queueing would pile up behind a slow database); across replicas the job's own lock
 * decides (jobs/session-lock.ts). `runNow` is queued instead, because its caller needs a run that
 * starts after its own writes. `stop` cuts the schedule, aborts the run in flight and waits for it,
 * so shutdown is bounded by the run's reaction to its signal.
 */
export function startJob<T>(options: JobOptions<T>): Job<T> {
  const controller = new AbortController();
  let current: Promise<T> | undefined;
  let queued: Promise<T> | undefined;

  const start = (): Promise<T> => {
    const run = options.run(controller.signal).finally(() => {
      if (current === run) current = undefined;
    });
    current = run;
    return run;
  };

  const job: Job<T> = {
    tick() {
      if (controller.signal.aborted) return Promise.resolve(undefined);
      if (current || queued) {
        options.onSkipped?.('overlap');
        options.log.debug({ job: options.name }, 'tick skipped: the previous run is still going');
        return Promise.resolve(undefined);
      }
      return start().catch((error: unknown) => {
        // A run cut short by the job's stop (a shutdown) is what the stop asked for, not a failure.
        if (controller.signal.aborted) options.log.info({ err: error, job: options.name }, `${options.name} run stopped`);
        else options.log.error({ err: error, job: options.name }, `${options.name} run failed`);
        return undefined;
      });
    },
    runNow() {
      if (controller.signal.aborted) return Promise.reject(new Error(`${options.name} is stopping`));
      if (!current) return start();
      // One queued run serves every caller that asked while a run was in flight.
      queued ??= current
        .catch(() => undefined)
        .then(() => {
          queued = undefined;
          if (controller.signal.aborted) throw new Error(`${options.name} is stopping`);
          return start();
        });
      return queued;
    },
    stop() {
      stopping ??= (async () => {
        await cancelSchedule();
        controller.abort(new Error(`${options.name} stopping`));
        await Promise.allSettled([current, queued]);
      })();
      return stopping;
    },
  };

  let stopping: Promise<void> | undefined;
  let cancelSchedule: () => Promise<void>;
  if (typeof options.schedule === 'string') {
    // In UTC, whatever the host's zone: a schedule read in a zone with daylight saving skips or
    // repeats an hour twice a year (node-cron 4.6, which this replaced, ran nothing for two hours
    // and spun on the night the clocks went back, in a process whose TZ was Europe/Berlin:
    // test/jobs/cron-schedule-dst.test.ts). Not croner's `protect`: it would drop a tick silently;
    // tick() skips it and counts it. No `name`: croner keeps named jobs in a process-wide list.
    const task = new Cron(options.schedule, CRON_OPTIONS, () => void job.tick());
    cancelSchedule = async () => task.stop();
  } else {
    const every = options.schedule.everyMs;
    let timer: NodeJS.Timeout | undefined;
    // A fixed delay between the end of one run and the next tick: a long run pushes the next out.
    const next = () => {
      timer = setTimeout(() => void job.tick().finally(() => !controller.signal.aborted && next()), every);
      timer.unref();
    };
    if (options.runAtStart) void job.tick().finally(() => !controller.signal.aborted && next());
    else next();
    cancelSchedule = async () => clearTimeout(timer);
  }
  options.stopOn?.addEventListener('abort', () => void job.stop(), { once: true });
  return job;
}
