import type { PendingQuery, Row, TransactionSql } from 'postgres';

/**
 * Materialises a rule's candidate rows (the expensive scan of the ledger) as a temporary table
 * dropped at commit. CREATE TABLE AS may run its query with parallel workers where
 * INSERT ... SELECT may not (PostgreSQL runs no INSERT in parallel), and the candidates are few, so
 * the rule then describes them and inserts into `found` cheaply. Measured at 1,000,000 orders
 * (bench/reconcile/index.ts seed, 2 cores): missed_webhook's anti-join 5.3 s as INSERT ... SELECT, 2.1 s
 * staged; orphan_webhook's 2.0 s, 0.8 s. A query that reads the temporary table `scope`
 * (incremental pass) is planned serially, which is what a small scope wants anyway.
 */
export async function stage(tx: TransactionSql, table: string, query: PendingQuery<Row[]>): Promise<number> {
  const result = await tx`create temporary table ${tx(table)} on commit drop as ${query}`;
  return result.count;
}
