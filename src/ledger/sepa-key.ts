import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';

/**
 * A SEPA reference as the rules compare it: upper-case, without the blanks around it; null when
 * blank. Banks match references without regard to case (the bank credit of "po…01" carries
 * "PO…01"), and a provider's payload may carry a blank around one: compared as sent, " PO…02"
 * matched no credit, and "PO…01" and "po…01" were two references one credit paid.
 */
export function sepaKey(sql: Sql | TransactionSql, column: PendingQuery<Row[]>) {
  return sql`nullif(upper(btrim(${column})), '')`;
}
