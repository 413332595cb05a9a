import type { Sql } from 'postgres';
import { isTransientDatabaseError } from '../db/errors.js';
import type { Logger } from '../log/logger.js';
import { unparsed } from './classify.js';
import { writeDeliveries, type DeliveryRecord, type WriteResult } from './ledger-write.js';

export class LedgerUnavailableError extends Error {
  override readonly name = 'LedgerUnavailableError';
}

interface Pending {
  record: DeliveryRecord;
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
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly options: GroupCommitOptions,
  ) {}

  write(record: DeliveryRecord): Promise<WriteResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      this.pump();
    });
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
      void this.commit(batch).finally(() => {
        this.inFlight -= 1;
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
