import { setTimeout as sleep } from 'node:timers/promises';
import { GroupCommit } from '../batch/group-commit.js';
import { YieldingPace, type PaceSettings } from '../batch/pace.js';
import type { CopyPace } from './overlap.js';
import type { FreshRows, LinesWhenAsked } from './staged-rows.js';
import type { StatementSection } from './types.js';

/** A statement, or a part of one (types.ts SectionSink `more`), as the reader handed it over. */
export interface StatementPart {
  section: StatementSection;
  /** its lines; a built statement's (staged-rows.ts BuiltStatement) are read when asked */
  lines: LinesWhenAsked;
  /** how many lines it holds */
  count: number;
  more: boolean;
  /** lines of the file before it */
  firstN: number;
  /** its statement's place in the file */
  index: number;
  /** its rows, built when it was handed over (a statement handed over whole): staged-rows.ts freshRows */
  fresh?: FreshRows;
}

/**
 * Writes one part (overlap.ts storeStatement) and resolves with what it stored, or null for a part
 * with more to come. Nothing else uses the connection until it resolves.
 */
export type StorePart<R> = (part: StatementPart, pace?: CopyPace) => Promise<R | null>;

/** The receiver whose acknowledgements an import in the daemon must not slow (batch/pace.ts). */
export interface YieldTo {
  /** its worst recent commit time (webhooks/create-receiver.ts commitPressureMs) */
  pressureMs(): number;
  pace: PaceSettings;
  /** told how long (ms) the import is about to wait for the receiver, each time it does */
  gaveWay?(ms: number): void;
}

/**
 * The inbox's imports beside the receiver: no statement is stored while one of the receiver's
 * commits in the last 500 ms took over 10 ms (its p99 alone is 4 ms, bench/README.md
 * import-ingest), the share of time spent storing halves after each statement it was slower and
 * grows back by 5 % after each it stayed under 5 ms, down to a sixteenth.
 */
export const RECEIVER_PACE: PaceSettings = { maxDuty: 1, minDuty: 1 / 16, yieldAboveMs: 10, step: 0.05 };

// How long an import waits for the receiver's commits to get fast again before it stores its next
// statement anyway, at its slowest pace (reparse waits as long, reparse/run.ts).
const MAX_YIELD_MS = 2_000;
const YIELD_STEP_MS = 25;

/**
 * Beside the receiver: no statement while the receiver's commits are slow, and a rest after each
 * that follows them (batch/pace.ts), so the import takes the cores and the WAL in a share the
 * receiver's acknowledgements tolerate. A statement of new days is copied a chunk at a time
 * (overlap.ts CopyPace), with the rest its chunk's time earns at the statement's duty after each,
 * and a wait while the receiver's commits are slow: one COPY of 4,000 lines held the cores and the
 * WAL for its whole length. The duty changes once per statement, answering the worst commit after
 * any of its chunks.
 */
function paced<T, R>(write: (parts: readonly T[], pace: CopyPace) => Promise<R[]>, yieldTo: YieldTo): (parts: readonly T[]) => Promise<R[]> {
  const pace = new YieldingPace(yieldTo.pace);
  // Time already paced (the chunks' work and their rests), left out of the statement's own.
  let accounted = 0;
  const giveWay = (ms: number) => {
    yieldTo.gaveWay?.(ms);
    accounted += ms;
    return sleep(ms);
  };
  const whilePressed = async () => {
    const waiting = performance.now();
    while (pace.mustYield(yieldTo.pressureMs()) && performance.now() - waiting < MAX_YIELD_MS) await giveWay(YIELD_STEP_MS);
  };
  // The receiver's worst commit time right after each chunk of the statement: the duty answers to
  // it at the statement's end, when the rests after the chunks have let the receiver recover.
  let worstAfterChunk = 0;
  const afterChunk: CopyPace = async (busyMs) => {
    accounted += busyMs;
    worstAfterChunk = Math.max(worstAfterChunk, yieldTo.pressureMs());
    const rest = pace.restFor(busyMs);
    if (rest > 0) await giveWay(rest);
    await whilePressed();
  };
  return async (parts) => {
    await whilePressed();
    const started = performance.now();
    const accountedBefore = accounted;
    worstAfterChunk = 0;
    const results = await write(parts, afterChunk);
    // The chunks were paced as they went: only the rest of the statement's time is paced here.
    const rest = pace.pauseAfter(Math.max(0, performance.now() - started - (accounted - accountedBefore)), Math.max(worstAfterChunk, yieldTo.pressureMs()));
    if (rest > 0) await giveWay(rest);
    return results;
  };
}

/**
 * Between a file's reader and its import transaction: the reader hands over each statement as it
 * ends, with its staged rows already built, and reads on while Postgres stores the ones before
 * (one core each on the 2-core machine). The one batcher (batch/group-commit.ts) queues them and
 * stores one statement at a time: a statement of new days is copied (overlap.ts), and a COPY allows
 * nothing else on the connection; a statement the overlap rules match has its queries sent all at
 * once, before the first result is awaited. One at a time also because of how postgres.js
 * pipelines a transaction: once a query must wait for an answer
 * before the next is sent (the first use of a statement's text, which is described first; a write
 * the socket takes only in part), it sends the queued ones one by one, each after the one before
 * has answered and the event loop has had a turn, until none is queued; with the next statement
 * always queued behind the one being stored, that was never, and Postgres waited for the reader
 * before each query (idle in transaction a third of the time, the main thread idle 40 %). Sent when
 * the one before has been stored, a statement's queries go out at once, and building its rows
 * ahead leaves only the sending between two statements. The connection runs queries in the order
 * they were sent, so each statement sees every one before it stored. At most `maxPendingLines`
 * lines wait (the reader awaits the oldest statement beyond that): memory stays bounded by a few
 * statements.
 */
export class StorePipeline<R> {
  private readonly writer: GroupCommit<StatementPart, R | null>;
  private readonly pending: { done: Promise<void>; lines: number }[] = [];
  private pendingLines = 0;
  private linesQueued = 0;
  private statementsQueued = 0;
  /** The first failure in the file's order: later parts are not written, and it is the one reported. */
  private failure: { index: number; error: unknown } | undefined;

  constructor(
    store: StorePart<R>,
    private readonly onStored: (result: R) => void,
    private readonly maxPendingLines: number,
    yieldTo?: YieldTo,
  ) {
    const write = (parts: readonly StatementPart[], pace?: CopyPace) => {
      // Every part's queries are sent now, in order, before any result is awaited.
      const sent = parts.map((part) => (this.failure ? Promise.reject(this.failure.error) : store(part, pace)));
      return Promise.all(sent.map((s, i) => s.catch((error: unknown) => this.fail(parts[i]!.index, error))));
    };
    this.writer = new GroupCommit<StatementPart, R | null>({ slots: 1, take: () => 1, write: yieldTo ? paced(write, yieldTo) : write });
  }

  private fail(index: number, error: unknown): never {
    if (!this.failure || index < this.failure.index) this.failure = { index, error };
    throw this.failure.error;
  }

  /** Queues the reader's next part; waits while too many lines are queued. Throws the first failure. */
  async add(
    section: StatementSection,
    lines: LinesWhenAsked,
    more: boolean,
    fresh?: (firstN: number) => FreshRows,
    /** how many lines: required for lines read when asked */
    lineCount?: number,
  ): Promise<void> {
    if (this.failure) throw this.failure.error;
    const count = lineCount ?? (typeof lines === 'function' ? Number.NaN : lines.length);
    if (!Number.isInteger(count)) throw new Error('StorePipeline.add: lines read when asked need their count');
    const firstN = this.linesQueued;
    const part: StatementPart = { section, lines, count, more, firstN, index: this.statementsQueued, ...(fresh ? { fresh: fresh(firstN) } : {}) };
    this.linesQueued += count;
    if (!more) this.statementsQueued += 1;
    // Reported in the file's order, each after the one before it.
    const done = Promise.all([this.pending.at(-1)?.done, this.writer.add(part)]).then(([, result]) => {
      if (result !== null) this.onStored(result);
    });
    // Awaited below or in drain(); until then its rejection is held, not unhandled.
    done.catch(() => undefined);
    this.pending.push({ done, lines: count });
    this.pendingLines += count;
    while (this.pendingLines > this.maxPendingLines) {
      const oldest = this.pending.shift()!;
      this.pendingLines -= oldest.lines;
      await oldest.done;
    }
  }

  /** Waits for every queued part; throws the first failure. */
  async drain(): Promise<void> {
    for (const p of this.pending.splice(0)) await p.done;
    this.pendingLines = 0;
    if (this.failure) throw this.failure.error;
  }

  /**
   * After the reader failed with `error`: waits until nothing is being written (the transaction
   * must not end under a query of it), and returns what to report: a failure of a statement before
   * it in the file, else `error`.
   */
  async settle(error: unknown): Promise<unknown> {
    await this.writer.idle();
    return this.failure?.error ?? error;
  }
}
