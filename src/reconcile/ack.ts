import type { Database } from '../db/database.js';
import { lockKey } from '../jobs/lock-keys.js';
import { transactionLock } from '../jobs/session-lock.js';
import type { ProviderEnvironment } from '../config/schema.js';
import { SQL_ISO_MICROSECONDS } from '../db/time-format.js';
import { transaction } from '../db/transaction.js';

export interface AcknowledgedDiscrepancy {
  id: number;
  kind: string;
  status: 'acknowledged';
  environment: ProviderEnvironment;
  acknowledgedAt: string;
  acknowledgedBy: string;
  note: string;
}

export type AckResult =
  | { outcome: 'acknowledged'; discrepancy: AcknowledgedDiscrepancy }
  /** Unknown id: 404. */
  | { outcome: 'not_found' }
  /** Already resolved by the machine: nothing for a person to acknowledge (409). */
  | { outcome: 'resolved'; id: number };

/** 'operator:<name>' in history, so a person's change is never confused with the reconciler's. */
export function operatorActor(name: string): string {
  return name.startsWith('operator:') ? name : `operator:${name}`;
}

/**
 * Marks a discrepancy acknowledged with a person's note, remembering the evidence hash it was
 * acknowledged against (a later pass reopens it only if the evidence changes). Waits for a running
 * pass of the environment (its advisory lock, transaction-scoped here) so the pass's history never
 * misses a status change made under it. Acknowledging again replaces the note and adds history.
 */
export async function acknowledgeDiscrepancy(
  database: Database,
  id: number,
  note: string,
  actor: string,
  /** When given, a discrepancy of another environment is 'not_found' (an operator acts on their own). */
  environment?: ProviderEnvironment,
): Promise<AckResult> {
  if (!Number.isSafeInteger(id) || id <= 0) return { outcome: 'not_found' };
  const trimmed = note.trim();
  if (trimmed === '') throw new TypeError('an acknowledgement needs a note');
  const by = operatorActor(actor);
  const [found] = await database.sql<{ environment: ProviderEnvironment }[]>`select environment from discrepancies where id = ${id}`;
  if (!found || (environment !== undefined && found.environment !== environment)) return { outcome: 'not_found' };
  return transaction(database.sql, async (tx) => {
    await tx`set local lock_timeout = '60s'`;
    await transactionLock(tx, lockKey('reconcile', found.environment));
    const [row] = await tx<{ status: string }[]>`select status from discrepancies where id = ${id} for update`;
    if (!row) return { outcome: 'not_found' } as const;
    if (row.status === 'resolved') return { outcome: 'resolved', id } as const;
    const [updated] = await tx<{ kind: string; environment: ProviderEnvironment; acknowledged_at: string }[]>`
      update discrepancies
      set status = 'acknowledged', acknowledged_at = now(), acknowledged_by = ${by}, ack_note = ${trimmed},
          acknowledged_evidence_hash = evidence_hash
      where id = ${id}
      returning kind::text, environment, to_char(acknowledged_at at time zone 'UTC', ${SQL_ISO_MICROSECONDS}) as acknowledged_at`;
    await tx`
      insert into discrepancy_history (discrepancy_id, from_status, to_status, actor, reason, evidence)
      select id, ${row.status}::discrepancy_status, 'acknowledged', ${by}, ${trimmed}, evidence
      from discrepancies where id = ${id}`;
    return {
      outcome: 'acknowledged',
      discrepancy: {
        id, kind: updated!.kind, status: 'acknowledged', environment: updated!.environment,
        acknowledgedAt: updated!.acknowledged_at, acknowledgedBy: by, note: trimmed,
      },
    } as const;
  });
}
