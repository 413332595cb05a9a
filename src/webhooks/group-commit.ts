import type { Sql } from 'postgres';
import { AbandonedError, GroupCommit } from '../batch/group-commit.js';
import { writeHalving } from '../batch/halving.js';
import { isReadOnlyError, isRefusalOfValues, isTransientDatabaseError } from '../db/errors.js';
import type { Logger } from '../log/logger.js';
import { refusedByLedger } from './classify.js';
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

export interface GroupCommitWriterOptions {
  maxBatch: number;
  maxConcurrentBatches: number;
  log: Logger;
  onBatch?: (size: number) => void;
  /** Seconds from sending a batch's statement to its commit, for batches that committed. */
  onCommit?: (seconds: number) => void;
  /** The database refused a batch as read-only (SQLSTATE 25006): a standby, or a read-only primary. */
  onReadOnly?: (reason: string) => void;
}

/** One delivery's outcome within a batch: halving can commit some of a batch and not others. */
type Outcome = { ok: true; result: WriteResult } | { ok: false; error: Error };

/**
 * The receiver's writer: group commit (batch/group-commit.ts) of deliveries, one statement and one
 * commit per batch (ledger-write.ts), with the receiver's failure policy beside its statement. Each
 * caller's promise settles only after the batch holding its delivery committed (or failed).
 */
export class GroupCommitWriter {
  private readonly batches: GroupCommit<DeliveryRecord, Outcome>;

  constructor(
    private readonly sql: Sql,
    private readonly options: GroupCommitWriterOptions,
  ) {
    this.batches = new GroupCommit({
      write: (records) => this.commit(records),
      slots: options.maxConcurrentBatches,
      take: (queue) => Math.min(queue.length, options.maxBatch),
    });
  }

  /**
   * Settles after the delivery's batch committed, or with AckDeadlineError once `deadlineMs`
   * (milliseconds from now) passes first: then a delivery still queued is taken out and never
   * written, and one already sent may still commit.
   */
  write(record: DeliveryRecord, deadlineMs?: number): Promise<WriteResult> {
    return this.batches.add(record, deadlineMs).then(
      (outcome) => (outcome.ok ? outcome.result : Promise.reject(outcome.error)),
      (error: unknown) => Promise.reject(error instanceof AbandonedError ? new AckDeadlineError(error.sent) : error),
    );
  }

  /**
   * Milliseconds the oldest delivery still waiting for its commit (queued or in a batch sent to
   * the database) has waited; 0 when none waits. Readiness reads it: commits that stall past the
   * ack deadline mean this replica cannot acknowledge.
   */
  oldestPendingMs(): number {
    return this.batches.oldestPendingMs();
  }

  /** Resolves when nothing is queued or in flight: the receiver's drain on shutdown. */
  idle(): Promise<void> {
    return this.batches.idle();
  }

  /**
   * Commits a batch (one statement); a failure that is not the database being unavailable is
   * isolated by halving (batch/halving.ts), the rest of the batch answered after it, a few small
   * statements later. The schemas refuse what the columns cannot hold (payloads.ts, and
   * typedRowProblem in typed-rows.ts), so this is the last line, not the usual path.
   */
  private commit(batch: readonly DeliveryRecord[]): Promise<Outcome[]> {
    return writeHalving(batch, {
      write: (records) => this.statement(records),
      alone: (record, error) => this.commitUnparsed(record, error as Error),
      onHalve: (size, error) => {
        if (size === batch.length) this.options.log.warn({ err: (error as Error).message, size }, 'batch commit failed; halving it to find the delivery at fault');
      },
    });
  }

  /**
   * One statement; the ledger being unavailable fails every delivery of it alike, without halving.
   * Only a refusal of the values (isRefusalOfValues: classes 22, 23, 54000) can be one delivery's
   * fault and is halved; any other failure (a privilege the role lacks, a table missing, a bug in
   * the statement) would refuse every delivery, stored unparsed or not: answered 2xx as
   * ledger_refused, the event was never applied and the provider never retried it.
   */
  private async statement(records: readonly DeliveryRecord[]): Promise<Outcome[]> {
    this.options.onBatch?.(records.length);
    try {
      const started = performance.now();
      const results = await writeDeliveries(this.sql, records);
      this.options.onCommit?.((performance.now() - started) / 1000);
      return results.map((result) => ({ ok: true, result }));
    } catch (error) {
      if (isRefusalOfValues(error) && !isTransientDatabaseError(error)) throw error;
      if (isReadOnlyError(error)) this.options.onReadOnly?.((error as Error).message);
      const unavailable = new LedgerUnavailableError('ledger unavailable', { cause: error });
      return records.map(() => ({ ok: false, error: unavailable }));
    }
  }

  /**
   * A delivery whose typed values the ledger refused is still a verified delivery: it is stored
   * with its raw bytes as invalid_shape (reason ledger_refused, the database's message as its
   * parse error) and answered 2xx, instead of being answered 500 and lost once the provider's
   * retries run out. Only if that fails too is the error passed on.
   */
  private async commitUnparsed(record: DeliveryRecord, error: Error): Promise<Outcome> {
    const classification = record.classification;
    if (classification.status !== 'parsed' && classification.reason === 'ledger_refused') return { ok: false, error };
    this.options.log.error({ err: error.message, topic: classification.topic }, 'ledger refused a delivery\'s parsed fields; storing it unparsed');
    const [outcome] = await this.commit([{ ...record, classification: refusedByLedger(classification, error) }]);
    return outcome as Outcome;
  }
}
