import type { Logger } from '../log/logger.js';

type Cleanup = () => Promise<void> | void;

/**
 * Components register their cleanup as they start; on shutdown they run in reverse order of
 * registration (the pool, registered first, closes last). One AbortSignal tells loops and outbound
 * requests to stop; a hard deadline keeps a stuck cleanup from holding the process forever.
 */
export class Shutdown {
  private readonly cleanups: { name: string; fn: Cleanup }[] = [];
  private readonly controller = new AbortController();
  private running: Promise<void> | undefined;
  private readonly late = new Set<Promise<void>>();
  private firstReason: string | undefined;

  constructor(
    private readonly log: Logger,
    private readonly deadlineMs: number,
    /**
     * What happens when the deadline passes with cleanups still running. A command's process exits
     * non-zero here (commands/command.ts): a hung cleanup must not keep a stopping service alive
     * past what systemd or Kubernetes were told (TimeoutStopSec, terminationGracePeriodSeconds).
     */
    private readonly onDeadline?: () => void,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get isShuttingDown(): boolean {
    return this.controller.signal.aborted;
  }

  /** Resolves when shutdown starts (a signal, or a command that finished). */
  stopping(): Promise<void> {
    const signal = this.controller.signal;
    return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  /**
   * A component registered once the drain has begun (it was starting when the signal came) is
   * stopped at once: the drain has passed it by, and nothing else would stop it.
   */
  register(name: string, fn: Cleanup): void {
    if (this.running === undefined) {
      this.cleanups.push({ name, fn });
      return;
    }
    const late = (async () => {
      try {
        await fn();
        this.log.debug({ component: name }, 'stopped (started while shutting down)');
      } catch (error) {
        this.log.error({ err: error, component: name }, 'cleanup failed');
      }
    })();
    this.late.add(late);
    void late.finally(() => this.late.delete(late));
  }

  /**
   * Makes a registered component the first to stop, as if registered now: for one started early
   * (so that its start can fail before others ran) whose stop must still come before theirs.
   */
  stopFirst(name: string): void {
    const i = this.cleanups.findIndex((c) => c.name === name);
    if (i >= 0) this.cleanups.push(...this.cleanups.splice(i, 1));
  }

  /** Throws the shutdown's reason when it has begun: for a startup, between its steps. */
  throwIfStopping(): void {
    this.controller.signal.throwIfAborted();
  }

  /** Idempotent: a second call returns the first call's promise. */
  run(reason: string): Promise<void> {
    this.firstReason ??= reason;
    this.running ??= this.drain(reason);
    return this.running;
  }

  /** Why the shutdown began (the first `run`'s reason: a signal's name, 'startup failed', ...). */
  get reason(): string | undefined {
    return this.firstReason;
  }

  private async drain(reason: string): Promise<void> {
    this.log.info({ reason }, 'shutting down');
    this.controller.abort(new Error(`shutdown: ${reason}`));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), this.deadlineMs);
      timer.unref();
    });
    const pending = new Set(this.cleanups.map((c) => c.name));
    const work = (async () => {
      for (const { name, fn } of [...this.cleanups].reverse()) {
        try {
          await fn();
          this.log.debug({ component: name }, 'stopped');
        } catch (error) {
          this.log.error({ err: error, component: name }, 'cleanup failed');
        }
        pending.delete(name);
      }
      while (this.late.size > 0) await Promise.allSettled([...this.late]);
    })();
    const outcome = await Promise.race([work.then(() => 'done' as const), deadline]);
    clearTimeout(timer);
    if (outcome === 'deadline') {
      this.log.error({ deadlineMs: this.deadlineMs, notStopped: [...pending] }, 'shutdown deadline passed; some components did not stop');
      this.onDeadline?.();
    }
  }
}

/**
 * First SIGTERM/SIGINT drains gracefully and the command then exits 0 (a requested stop that
 * completed is a success, which is also what systemd expects); a second signal exits at once with
 * 1, the drain not finished: CONTRACT.md knows 0, 1 (any failure) and 2 (usage or configuration),
 * not a shell's 128 + the signal number.
 */
export function installSignalHandlers(shutdown: Shutdown, log: Logger): () => void {
  let received = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    received += 1;
    if (received > 1) {
      log.warn({ signal }, 'second signal: exiting now, the drain not finished');
      process.exit(1);
    }
    void shutdown.run(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}

/**
 * For a process whose command has returned and set process.exitCode, on its way out (sockets
 * closing, logs flushing): a SIGTERM/SIGINT now ends it with that status. Without a handler it died
 * of the signal (143), a status CONTRACT.md has no place for (0, 1 or 2); a supervisor's second
 * SIGTERM can land there.
 */
export function exitWithStatusOnSignal(): void {
  const exit = () => process.exit();
  process.on('SIGTERM', exit);
  process.on('SIGINT', exit);
}
