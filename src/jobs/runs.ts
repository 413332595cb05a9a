import type { Sql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import { storableText } from '../db/text.js';

/**
 * Run records of the singleton jobs: one row per run in the job's table (poll_runs,
 * reconcile_runs, reparse_runs), started `running` and finished `complete`, `failed` or `aborted` with the
 * job's own totals. A row still `running` while the caller holds the job's lock was left by a
 * process that died mid-run: abandoning it is the lock holder's first step.
 */
export type RunTable = 'poll_runs' | 'reconcile_runs' | 'reparse_runs';
export type RunEnd = 'complete' | 'failed' | 'aborted';

/** What a dead process's run is recorded as: a poll cut short is aborted, a pass that did not finish failed. */
const ABANDONED: Record<RunTable, { as: RunEnd; error: string }> = {
  poll_runs: { as: 'aborted', error: 'the polling process ended before the run finished' },
  reconcile_runs: { as: 'failed', error: 'the reconciling process ended before the pass finished' },
  reparse_runs: { as: 'aborted', error: 'the reparsing process ended before the run finished' },
};

export async function startRun(sql: Sql, table: RunTable, environment: ProviderEnvironment, columns: Record<string, string | number | boolean | null> = {}): Promise<number> {
  const row = { environment, ...columns };
  const [inserted] = await sql<{ id: string }[]>`insert into ${sql(table)} ${sql(row)} returning id::text as id`;
  return Number(inserted!.id);
}

/**
 * Closes a run that is still `running`; false when it was closed already. A holder whose lock
 * session died keeps running until it notices, and meanwhile the next holder closes its run
 * (abandonStaleRuns) and starts its own: rewriting the closed run then would record it as ending
 * after the next leader started, two leaders at once on record (test/jobs/runs.test.ts).
 */
export async function finishRun(
  sql: Sql,
  table: RunTable,
  id: number,
  status: RunEnd,
  error: string | null,
  totals: Record<string, string | number> = {},
): Promise<boolean> {
  // The error is often another party's text (a provider's error details may hold a NUL, which
  // Postgres text refuses): unstorable, the run could not be closed and stayed 'running'.
  const set = { ...totals, status, error: error === null ? null : storableText(error) };
  const rows = await sql`update ${sql(table)} set finished_at = now(), ${sql(set)} where id = ${id} and status = 'running' returning id`;
  return rows.length > 0;
}

export async function abandonStaleRuns(sql: Sql, table: RunTable, environment: ProviderEnvironment): Promise<number> {
  const rows = await sql`
    update ${sql(table)} set status = ${ABANDONED[table].as}, finished_at = now(), error = coalesce(error, ${ABANDONED[table].error})
    where environment = ${environment} and status = 'running'
    returning id`;
  return rows.length;
}
