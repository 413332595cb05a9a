import type { ProviderEnvironment } from '../config/schema.js';

/**
 * Every advisory lock key bnpl-recon takes, in one table, so no two mechanisms can collide. All
 * start with "bnpl" (0x626e706c) in the high 32 bits; sandbox and production get their own keys
 * for the per-environment singletons, since two daemons may share one database.
 */
const KEYS = {
  /** drizzle's migrator takes no lock: replicas booting together serialise on this one. */
  migrations: { sandbox: 0x626e706c_0001n, production: 0x626e706c_0001n },
  /** one poller per environment across replicas */
  poll: { sandbox: 0x626e706c_0002n, production: 0x626e706c_0003n },
  /** one reconciliation pass per environment; acknowledgements wait on it (reconcile/ack.ts) */
  reconcile: { sandbox: 0x626e706c_0500n, production: 0x626e706c_0501n },
  /** one re-classification of stored deliveries per environment (ledger reparse, the daemon's after an upgrade) */
  reparse: { sandbox: 0x626e706c_0600n, production: 0x626e706c_0601n },
  /** creating and retiring webhook_deliveries' partitions: one table for both environments, so one key */
  partitions: { sandbox: 0x626e706c_0700n, production: 0x626e706c_0700n },
  /** statement imports of one environment take turns, so the overlap rule sees every booking stored before (statements/overlap.ts) */
  statementImport: { sandbox: 0x626e706c_0800n, production: 0x626e706c_0801n },
  /** payout report imports of one environment take turns, so two racing imports of one file store it once (payout-reports/import.ts) */
  payoutReportImport: { sandbox: 0x626e706c_0900n, production: 0x626e706c_0901n },
} as const satisfies Record<string, Record<ProviderEnvironment, bigint>>;

export type LockName = keyof typeof KEYS;

export function lockKey(name: LockName, environment: ProviderEnvironment = 'sandbox'): bigint {
  return KEYS[name][environment];
}

/** Every name with its keys, for the test that no two mechanisms share one. */
export function lockKeyTable(): ReadonlyArray<[LockName, Record<ProviderEnvironment, bigint>]> {
  return Object.entries(KEYS) as [LockName, Record<ProviderEnvironment, bigint>][];
}
