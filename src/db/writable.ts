import type { Sql } from 'postgres';

/**
 * Why this session's server refuses writes (a standby in recovery, or default_transaction_read_only
 * on for the role, the database or the server), or undefined when it accepts them. One round trip.
 */
export async function readOnlyReason(sql: Sql): Promise<string | undefined> {
  const [row] = await sql<{ recovery: boolean; read_only: string }[]>`
    select pg_is_in_recovery() as recovery, current_setting('transaction_read_only') as read_only`;
  if (row?.recovery) return 'the database server is a standby (in recovery)';
  if (row?.read_only === 'on') return 'the database refuses writes (default_transaction_read_only is on)';
  return undefined;
}
