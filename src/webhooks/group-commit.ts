import type { Sql } from 'postgres';
import { isTransientDatabaseError } from '../db/errors.js';
import type { Logger } from '../log/logger.js';
import { unparsed } from './classify.js';
import { writeDeliveries, type DeliveryRecord, type WriteResult } from './ledger-write.js';

export class LedgerUnavailableError extends Error {
  override readonly name = 'LedgerUnavailableError';
}

/**
 * The acknowledgement deadline passed before the delivery's batch committed. `mayCommit` says the
 * batch was already sent: it may still commit, and the provider's retry is then a duplicate, applied
 * once (the primary key of webhook_applied_events decides, ledger-write.ts). Otherwise the delivery
 * was taken out of the queue and is never written.
 */
export class AckDeadlineError extends Error {
  override readonly name = 'AckDeadlineError';
  constructor(readonly mayCommit: boolean) {
    super(mayCommit ? 'ack deadline passed while the batch was committing' : 'ack deadline passed before the batch was sent');
  }
}

interface Pending {
  record: DeliveryRecord;
  /** performance.now() when it was queued, for the stall check. */
  queuedAt: number;
  resolve: (result: WriteResult) => void;
  reject: (error: Error) => void;
}

export interface GroupCommitOptions {
  maxBatch: number;
  maxConcurrentBatches: number;
  log: Logger;
  onBatch?: (size: number) => void;
  /** Seconds from sending a batch's statement to its commit, for batches that committed. */
  onCommit?: (seconds: number) => void;
}

/**
 * Group commit for the webhook receiver. A delivery that arrives while the ledger is idle is written
 * at once, alone; deliveries that arrive while a batch is being written wait for the next free slot
 * and then share one batch (one statement, committed on its own: ledger-write.ts). No timer delays
 * a commit, so latency at low load is one statement, and throughput under load is that of batched
 * ones. Each caller's promise settles only after the batch holding its row has committed (or failed).
 */
export class GroupCommitWriter {
  private queue: Pending[] = [];
  private inFlight = 0;
  /** performance.now() at which each in-flight batch was sent. */
  private readonly inFlightSince = new Set<{ since: number }>();
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly options: GroupCommitOptions,
  ) {}

  /**
   * Settles after the delivery's batch committed, or with AckDeadlineError once `deadlineMs`
   * (milliseconds from now) passes first: then a delivery still queued is taken out and never
   * written, and one already sent may still commit.
   */
  write(record: DeliveryRecord, deadlineMs?: number): Promise<WriteResult> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const pending: Pending = {
        record,
        queuedAt: performance.now(),
        resolve: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      if (deadlineMs !== undefined) {
        timer = setTimeout(() => {
          const at = this.queue.indexOf(pending);
          if (at >= 0) this.queue.splice(at, 1);
          reject(new AckDeadlineError(at < 0));
          if (this.queue.length === 0 && this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
        }, Math.max(0, deadlineMs));
      }
      this.queue.push(pending);
      this.pump();
    });
  }

  /**
   * Milliseconds the oldest delivery still waiting for its commit (queued or in a batch sent to
   * the database) has waited; 0 when none waits. Readiness reads it: commits that stall past the
   * ack deadline mean this replica cannot acknowledge.
   */
  oldestPendingMs(): number {
    const now = performance.now();
    let oldest = now;
    for (const batch of this.inFlightSince) oldest = Math.min(oldest, batch.since);
    for (const pending of this.queue) oldest = Math.min(oldest, pending.queuedAt);
    return now - oldest;
  }

  /** Resolves when nothing is queued or in flight: the receiver's drain on shutdown. */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.options.maxConcurrentBatches) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.inFlight += 1;
      const sent = { since: Math.min(...batch.map((p) => p.queuedAt)) };
      this.inFlightSince.add(sent);
      void this.commit(batch).finally(() => {
        this.inFlight -= 1;
        this.inFlightSince.delete(sent);
        this.pump();
        if (this.queue.length === 0 && this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      });
    }
  }

  /**
   * Commits a batch; on a failure that is not the database being unavailable, isolates the failing
   * delivery by halving (about 2 log2(n) statements for one bad row among n, where writing every
   * neighbour singly took n), so one bad delivery costs its neighbours little. The schemas refuse
   * what the columns cannot hold (payloads.ts, and typedRowProblem in typed-rows.ts), so this is
   * the last line, not the usual path.
   */
  private async commit(batch: Pending[], split = false): Promise<void> {
    this.options.onBatch?.(batch.length);
    try {
      const started = performance.now();
      const results = await writeDeliveries(this.sql, batch.map((p) => p.record));
      this.options.onCommit?.((performance.now() - started) / 1000);
      batch.forEach((pending, i) => pending.resolve(results[i] as WriteResult));
    } catch (error) {
      if (isTransientDatabaseError(error)) {
        const unavailable = new LedgerUnavailableError('ledger unavailable', { cause: error });
        for (const pending of batch) pending.reject(unavailable);
        return;
      }
      if (batch.length === 1) return this.commitUnparsed(batch[0] as Pending, error as Error);
      if (!split) this.options.log.warn({ err: (error as Error).message, size: batch.length }, 'batch commit failed; halving it to find the delivery at fault');
      const half = Math.ceil(batch.length / 2);
      await this.commit(batch.slice(0, half), true);
      await this.commit(batch.slice(half), true);
    }
  }

  /**
   * A delivery whose typed values the ledger refused is still a verified delivery: it is stored
   * with its raw bytes as invalid_shape (reason ledger_refused, the database's message as its
   * parse error) and answered 2xx, instead of being answered 500 and lost once the provider's
   * retries run out. Only if that fails too is the error passed on.
   */
  private async commitUnparsed(pending: Pending, error: Error): Promise<void> {
    const classification = pending.record.classification;
    if (classification.status !== 'parsed' && classification.reason === 'ledger_refused') return pending.reject(error);
    this.options.log.error({ err: error.message, topic: classification.topic }, 'ledger refused a delivery\'s parsed fields; storing it unparsed');
    const record: DeliveryRecord = { ...pending.record, classification: unparsed(classification, 'ledger_refused', `the ledger refused the parsed fields: ${error.message}`) };
    await this.commit([{ ...pending, record }], true);
  }
}
