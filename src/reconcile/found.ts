import type { TransactionSql } from 'postgres';
import { SQL_ISO_MICROSECONDS } from '../db/time-format.js';

/**
 * The pass's working set: every finding of every rule, with the identity the unique index
 * `discrepancies_identity_uq` uses. Dropped at commit. Rules insert into it; the lifecycle compares it
 * with `discrepancies` in two set-based statements instead of one round trip per finding.
 */
export async function createFoundTable(tx: TransactionSql): Promise<void> {
  await tx`
    create temporary table found (
      environment provider_environment not null,
      kind discrepancy_kind not null,
      entity_type discrepancy_entity_type not null,
      entity_id text not null,
      subject text not null,
      external_reference_id text,
      sepa_reference text,
      expected text,
      observed text,
      details text not null,
      evidence jsonb not null,
      evidence_hash text not null,
      primary key (environment, kind, entity_type, entity_id, subject)
    ) on commit drop`;
}

/** ISO 8601 UTC with microseconds, independent of the session's TimeZone (for evidence and hashes). */
export const ISO_FORMAT = SQL_ISO_MICROSECONDS;

/**
 * The head of every rule's insert into `found`, with its columns named, so a rule's select lines up
 * by name with this list rather than by counting twelve positions.
 */
export function insertIntoFound(tx: TransactionSql) {
  return tx`insert into found (environment, kind, entity_type, entity_id, subject, external_reference_id, sepa_reference,
                               expected, observed, details, evidence, evidence_hash)`;
}
