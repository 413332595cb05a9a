import type { Logger } from '../log/logger.js';

export interface Progress {
  /** How much is done so far (pages, lines, orders: the unit the reporter was made with). */
  update(done: number): void;
  /** Clears the terminal line; the caller prints or logs the summary. */
  finish(): void;
}

export interface ProgressOptions {
  /** What is being done, e.g. "poll sandbox" or a file name. */
  label: string;
  unit: string;
  /** When known, the share done and the time left are shown. */
  total?: number;
  log: Logger;
  /** A terminal gets a line rewritten in place; anything else gets a log line now and then. */
  stream?: NodeJS.WriteStream;
  logEveryMs?: number;
  now?: () => number;
}

/**
 * Progress of a long command: on a terminal (stderr by default) one line rewritten at most four
 * times a second with the count, the rate and, when the total is known, the time left; elsewhere
 * (systemd, Kubernetes, a pipe) an info log line every 10 s, so a long run is visibly alive.
 */
export function startProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => performance.now());
  const started = now();
  const tty = stream.isTTY === true;
  const every = tty ? 250 : (options.logEveryMs ?? 10_000);
  let last = started;
  let shown = false;
  const describe = (done: number) => {
    const seconds = Math.max((now() - started) / 1000, 0.001);
    const rate = done / seconds;
    const parts = [`${done.toLocaleString('en')} ${options.unit}`, `${Math.round(rate).toLocaleString('en')}/s`];
    if (options.total !== undefined && options.total > 0) {
      parts.push(`${Math.min(100, Math.floor((100 * done) / options.total))}%`);
      if (rate > 0) parts.push(`~${Math.ceil(Math.max(0, options.total - done) / rate)} s left`);
    }
    return { text: `${options.label}: ${parts.join(', ')}`, rate };
  };
  return {
    update(done) {
      if (now() - last < every) return;
      last = now();
      const { text, rate } = describe(done);
      if (tty) {
        stream.write(`\r\x1b[2K${text}`);
        shown = true;
      } else {
        options.log.info({ progress: options.label, done, unit: options.unit, perSecond: Math.round(rate), ...(options.total !== undefined ? { total: options.total } : {}) }, 'progress');
      }
    },
    finish() {
      if (shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}
