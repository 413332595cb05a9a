import type { Sql } from 'postgres';
import { isTransientDatabaseError } from '../db/errors.js';
import type { Logger } from '../log/logger.js';
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

  private async commit(batch: Pending[]): Promise<void> {
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
      if (batch.length === 1) {
        (batch[0] as Pending).reject(error as Error);
        return;
      }
      // One bad row must not fail its neighbours: write them one by one to find it.
      this.options.log.warn({ err: (error as Error).message, size: batch.length }, 'batch commit failed; retrying deliveries singly');
      for (const pending of batch) await this.commit([pending]);
    }
  }
}
