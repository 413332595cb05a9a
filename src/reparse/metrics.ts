import { Counter, type Registry } from 'prom-client';
import { METRIC_PREFIX } from '../metrics/registry.js';
import { REPARSE_OUTCOMES, type ReparseOutcome } from './outcome.js';

export interface ReparseMetrics {
  deliveries: Counter<'outcome'>;
  /** Seconds the daemon's reparse waited for the receiver's commits to get fast again. */
  yieldSeconds: Counter;
}

/** Stored deliveries re-classified by reparse, by outcome (outcome.ts); every series starts at 0. */
export function createReparseMetrics(registry: Registry): ReparseMetrics {
  const deliveries = new Counter({
    name: `${METRIC_PREFIX}reparse_deliveries_total`,
    help: 'Stored deliveries re-classified by a newer parser (ledger reparse, or the daemon after an upgrade), by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of REPARSE_OUTCOMES) deliveries.labels(outcome satisfies ReparseOutcome).inc(0);
  const yieldSeconds = new Counter({
    name: `${METRIC_PREFIX}reparse_yield_seconds_total`,
    help: 'Seconds the daemon\'s reparse held back because the receiver\'s ledger commits were slow',
    registers: [registry],
  });
  return { deliveries, yieldSeconds };
}
