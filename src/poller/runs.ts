import type { Sql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';

export type PollRunStatus = 'running' | 'complete' | 'failed' | 'aborted';

export interface PollRunTotals {
  pages: number;
  orders: number;
  requests: number;
  throttled: number;
  retries: number;
}

export async function startPollRun(sql: Sql, environment: ProviderEnvironment, holder: string): Promise<number> {
  const rows = await sql<{ id: string }[]>`
    insert into poll_runs (environment, holder) values (${environment}::provider_environment, ${holder})
    returning id::text as id`;
  return Number(rows[0]!.id);
}

export async function finishPollRun(sql: Sql, id: number, status: Exclude<PollRunStatus, 'running'>, totals: PollRunTotals, error: string | null): Promise<void> {
  await sql`
    update poll_runs set
      finished_at = now(), status = ${status}::poll_run_status, pages = ${totals.pages}, orders = ${totals.orders},
      requests = ${totals.requests}, throttled = ${totals.throttled}, retries = ${totals.retries}, error = ${error}
    where id = ${id}`;
}

/**
 * Runs left `running` by a process that died mid-poll. Only the poll-lock holder may call this:
 * while it holds the lock no other process of this environment is polling.
 */
export async function abandonStalePollRuns(sql: Sql, environment: ProviderEnvironment): Promise<number> {
  const rows = await sql`
    update poll_runs set status = 'aborted', finished_at = now(), error = coalesce(error, 'the polling process ended before the run finished')
    where environment = ${environment}::provider_environment and status = 'running'
    returning id`;
  return rows.length;
}
