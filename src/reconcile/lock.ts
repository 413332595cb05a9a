import type { ProviderEnvironment } from '../config/schema.js';

/**
 * One reconciliation pass at a time per environment, across every replica sharing the database:
 * the database decides, with a session-level advisory lock held on a reserved connection for the
 * pass (released by Postgres itself if the process dies). Keys sit next to the migration lock's
 * ("bnpl" + 1); sandbox and production get their own, since two daemons may share one database.
 */
export function reconcileLockKey(environment: ProviderEnvironment): string {
  const base = 0x626e706c_0500n;
  return (base + (environment === 'production' ? 1n : 0n)).toString();
}
