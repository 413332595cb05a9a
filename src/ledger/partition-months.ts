/**
 * The months of webhook_deliveries' partitions (pure): UTC calendar months, named
 * webhook_deliveries_pYYYY_MM, the same names migrations/0012_partition_deliveries.sql gave the
 * months the ledger held when it was partitioned.
 */
export const PARTITION_PREFIX = 'webhook_deliveries_p';
export const DEFAULT_PARTITION = 'webhook_deliveries_default';

/** The first instant (UTC) of the month holding `at`. */
export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

export function addMonths(month: Date, n: number): Date {
  return new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + n, 1));
}

export function partitionName(month: Date): string {
  return `${PARTITION_PREFIX}${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month a partition name stands for; null for any other table (the default partition). */
export function monthOfPartition(name: string): Date | null {
  const match = /^webhook_deliveries_p(\d{4})_(\d{2})$/.exec(name);
  if (!match) return null;
  const month = Number(match[2]);
  if (month < 1 || month > 12) return null;
  return new Date(Date.UTC(Number(match[1]), month - 1, 1));
}

/** The current month and the `ahead` months after it: the partitions that must exist. */
export function monthsToEnsure(now: Date, ahead: number): Date[] {
  const first = monthStart(now);
  return Array.from({ length: ahead + 1 }, (_, i) => addMonths(first, i));
}

/**
 * With `retentionMonths` = R, the current month and the R months before it are kept; a partition
 * whose month starts before that is retired (its every delivery is more than R full months old).
 * Undefined R: nothing is retired.
 */
export function isRetired(month: Date, now: Date, retentionMonths: number | undefined): boolean {
  if (retentionMonths === undefined) return false;
  return month.getTime() < addMonths(monthStart(now), -retentionMonths).getTime();
}

/**
 * How many months after the current one are covered by `partitions` (names) without a gap: a
 * delivery of the first month missing goes to the default partition. -1 when the current month
 * itself has none.
 */
export function monthsCoveredAhead(now: Date, partitions: readonly string[]): number {
  const names = new Set(partitions);
  let ahead = -1;
  while (names.has(partitionName(addMonths(monthStart(now), ahead + 1)))) ahead += 1;
  return ahead;
}
