import type { PendingQuery, Row, TransactionSql } from 'postgres';
import { environmentSchema, type ProviderEnvironment } from '../config/schema.js';
import { stage } from './stage.js';

/**
 * A set the invoice rules read, derived from the ledger and kept between passes in a table of its
 * own, so that a pass recomputes only the keys with new evidence (rules/invoice-common.ts says which
 * sets and why that is enough for each). Every name here is a constant of this code, never input.
 */
export interface KeptSet {
  /** What the rules read: a staged table in a full pass, a view of `table` in an incremental one. */
  name: string;
  /** The table that keeps the set, keyed by (environment, ...key). */
  table: string;
  key: readonly string[];
  /** The other columns. */
  values: readonly string[];
  /** The view's select list over `table`, when it must differ from the columns (a collation). */
  viewColumns?: string;
  /** Index the staged table by its key (rules look rows up by it); the kept table's key serves the view. */
  indexStaged: boolean;
  /** Every row of the set, computed from the ledger (key and value columns by name). */
  rows(tx: TransactionSql, environment: ProviderEnvironment): PendingQuery<Row[]>;
  /**
   * The rows of the keys whose evidence holds a row received at or after `lower` (an SQL
   * timestamptz). An incremental pass only upserts these: a set fits this mechanism only when a key,
   * once in it, stays in it while the ledger only adds evidence (an invoice keeps its reference, a
   * reference its latest factoring event), so no row of a recomputed key can have gone.
   */
  rowsSince(tx: TransactionSql, environment: ProviderEnvironment, lower: PendingQuery<Row[]>): PendingQuery<Row[]>;
  /** An SQL boolean: the ledger holds evidence of the set (a kept table empty meanwhile is rebuilt). */
  evidence(tx: TransactionSql, environment: ProviderEnvironment): PendingQuery<Row[]>;
}

/**
 * Brings a kept set up to date and makes `set.name` what the rules read. With `lower` (an
 * incremental pass: the previous complete pass's start less the margin), the keys with evidence
 * since then are recomputed, each from all its evidence, and upserted where they differ; the rules
 * read the kept table through a temporary view. Without it (a full pass), or when the kept table is
 * empty while the ledger holds evidence, every row is computed as a staged table, which the rules
 * read, and the kept table is written only where it differs: rewriting 1,000,000 unchanged invoices
 * took a full pass 8-10 s more (bench/README.md, reconcile).
 */
export async function refreshKeptSet(tx: TransactionSql, environment: ProviderEnvironment, set: KeptSet, lower: PendingQuery<Row[]> | undefined): Promise<boolean> {
  const { name, table, key, values } = set;
  const columns = [...key, ...values];
  const list = (prefix: string, names: readonly string[]) => names.map((c) => `${prefix}${c}`).join(', ');
  const differs = (a: string, b: string) => (values.length === 0 ? 'false' : `(${list(a, values)}) is distinct from (${list(b, values)})`);
  const upsert = values.length === 0
    ? `on conflict (environment, ${list('', key)}) do nothing`
    : `on conflict (environment, ${list('', key)}) do update set ${values.map((c) => `${c} = excluded.${c}`).join(', ')} where ${differs('k.', 'excluded.')}`;
  const [state] = await tx<{ kept: boolean; evidence: boolean }[]>`
    select exists (select 1 from ${tx(table)} where environment = ${environment}) as kept, ${set.evidence(tx, environment)} as evidence`;
  // A view an earlier pass on this connection left: a temporary view outlives its transaction.
  await tx.unsafe(`drop view if exists ${name}`);
  if (lower === undefined || (state!.evidence && !state!.kept)) {
    await stage(tx, name, set.rows(tx, environment));
    if (set.indexStaged) await tx.unsafe(`create unique index on ${name} (${list('', key)})`);
    await tx.unsafe(`analyze ${name}`);
    const on = key.map((c) => `k.${c} = f.${c}`).join(' and ');
    await stage(tx, `${name}_changed`, tx`
      select ${tx.unsafe(list('f.', columns))}, ${tx.unsafe(key.map((c) => `k.${c} as kept_${c}`).join(', '))}
      from ${tx(name)} f
      full join (select * from ${tx(table)} where environment = ${environment}) k on ${tx.unsafe(on)}
      where ${tx.unsafe(`f.${key[0]} is null or k.${key[0]} is null or ${differs('k.', 'f.')}`)}`);
    const removed = await tx`
      delete from ${tx(table)}
      where environment = ${environment}
        and (${tx.unsafe(list('', key))}) in (select ${tx.unsafe(list('kept_', key))} from ${tx(`${name}_changed`)} where ${tx.unsafe(`${key[0]} is null`)})`;
    const written = await tx`
      insert into ${tx(table)} as k (environment, ${tx.unsafe(list('', columns))})
      select ${environment}, ${tx.unsafe(list('', columns))} from ${tx(`${name}_changed`)} where ${tx.unsafe(`${key[0]} is not null`)}
      ${tx.unsafe(upsert)}`;
    // Whether the kept table wants an ANALYZE, for the incremental passes' plans (a full pass over a
    // kept table already current writes nothing). Not here: ANALYZE's lock conflicts with itself and
    // is held to the transaction's end, and the kept tables hold both environments' rows, so the
    // other environment's pass waited for the whole of this one (test/reconcile/two-environments-passes.test.ts).
    return removed.count + written.count > 0;
  }
  await tx`
    insert into ${tx(table)} as k (environment, ${tx.unsafe(list('', columns))})
    select ${environment}, ${tx.unsafe(list('f.', columns))} from (${set.rowsSince(tx, environment, lower)}) f
    ${tx.unsafe(upsert)}`;
  // A view takes no parameters: the environment is one of the enum's values, written as a literal.
  if (!environmentSchema.options.includes(environment)) throw new Error(`not an environment: ${String(environment)}`);
  await tx.unsafe(`
    create temporary view ${name} as
    select ${set.viewColumns ?? list('', columns)} from ${table} where environment = '${environment}'`);
  return false;
}
