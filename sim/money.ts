/**
 * Money in integer minor units (bigint). Decimal strings are made by integer arithmetic, never by
 * dividing a float, so 0.1 + 0.2 problems cannot reach a bank statement.
 */
export function formatCents(cents: bigint, separator = '.'): string {
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  const units = abs / 100n;
  const minor = (abs % 100n).toString().padStart(2, '0');
  return `${negative ? '-' : ''}${units.toString()}${separator}${minor}`;
}

/** value * numerator / denominator, rounded half away from zero, for non-negative values. */
export function mulDivRound(value: bigint, numerator: bigint, denominator: bigint): bigint {
  return (value * numerator * 2n + denominator) / (denominator * 2n);
}

