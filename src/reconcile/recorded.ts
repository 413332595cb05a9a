import type { TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { DiscrepancyKind, EntityType } from './types.js';

/** A finding whose evidence exists only at one moment (an import), recorded by the code that holds it. */
export interface RecordedFinding {
  environment: ProviderEnvironment;
  kind: DiscrepancyKind;
  entityType: EntityType;
  entityId: string;
  subject: string;
  expected: string | null;
  observed: string | null;
  details: string;
  evidence: Record<string, unknown>;
}

/**
 * Opens a finding inside the caller's transaction, so it commits with the evidence that proves it
 * (statement_unbalanced with the statement stored unbalanced) or not at all, with its history row
 * (actor `actor`). No pass decides these kinds (they are not in RULE_KINDS), so a pass never
 * resolves one; a person acknowledges it. Recording the same identity again changes nothing.
 * Returns the finding's id.
 */
export async function recordFinding(tx: TransactionSql, finding: RecordedFinding, actor: string): Promise<number> {
  const evidence = JSON.stringify(finding.evidence);
  const [row] = await tx<{ id: string; inserted: boolean }[]>`
    with ins as (
      insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, expected, observed, details, evidence, evidence_hash)
      values (${finding.environment}, ${finding.kind}, 'open', ${finding.entityType}, ${finding.entityId}, ${finding.subject},
              ${finding.expected}, ${finding.observed}, ${finding.details}, ${evidence}::jsonb, md5(${evidence}))
      on conflict (environment, kind, entity_type, entity_id, subject) do nothing
      returning id
    ),
    hist as (
      insert into discrepancy_history (discrepancy_id, from_status, to_status, actor, reason, evidence)
      select id, null, 'open', ${actor}, 'detected', ${evidence}::jsonb from ins
    )
    select id::text, true as inserted from ins
    union all
    select id::text, false from discrepancies
    where environment = ${finding.environment} and kind = ${finding.kind} and entity_type = ${finding.entityType}
      and entity_id = ${finding.entityId} and subject = ${finding.subject}`;
  return Number(row!.id);
}
