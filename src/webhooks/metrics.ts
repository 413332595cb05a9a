import { Counter, Histogram, type Registry } from 'prom-client';
import { METRIC_PREFIX } from '../metrics/registry.js';
import type { UnparsedReason } from './classify.js';
import { TOPICS_BY_FAMILY } from '../provider/vocabulary.js';

export const WEBHOOK_OUTCOMES = [
  'stored',
  'duplicate',
  'bad_signature',
  'forbidden_source',
  'invalid_json',
  'too_large',
  'unsupported_encoding',
  'ledger_unavailable',
  'ack_deadline',
  'no_secret',
  'error',
] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

export interface WebhookMetrics {
  deliveries: Counter<'outcome' | 'parse_status'>;
  ackSeconds: Histogram<'outcome'>;
  batchSize: Histogram;
  commitSeconds: Histogram;
  keyRefreshes: Counter<'outcome'>;
  unparsed: Counter<'topic_family' | 'reason'>;
}

/** The label series that can occur, created at 0 so an alert's increase() sees the first one. */
const UNPARSED_SERIES: [string, UnparsedReason][] = [
  ...Object.keys(TOPICS_BY_FAMILY).flatMap((family) => [
    [family, 'invalid_field'] as [string, UnparsedReason],
    [family, 'ledger_refused'] as [string, UnparsedReason],
  ]),
  ['unknown', 'unknown_topic'],
  ['unknown', 'no_topic'],
  ['unknown', 'not_an_object'],
];

export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  const deliveries = new Counter({
    name: `${METRIC_PREFIX}webhook_deliveries_total`,
    help: 'Webhook deliveries received, by outcome and parse status (none when not stored)',
    labelNames: ['outcome', 'parse_status'] as const,
    registers: [registry],
  });
  for (const outcome of WEBHOOK_OUTCOMES) {
    if (outcome === 'stored' || outcome === 'duplicate') {
      for (const status of ['parsed', 'unknown_topic', 'invalid_shape']) deliveries.labels(outcome, status).inc(0);
    } else deliveries.labels(outcome, 'none').inc(0);
  }
  const ackSeconds = new Histogram({
    name: `${METRIC_PREFIX}webhook_ack_duration_seconds`,
    help: 'Time from request start to the answer, by outcome',
    labelNames: ['outcome'] as const,
    // An edge at 2 s, BnplReconSlowWebhookAck's threshold (ops/prometheus/alerts.yml): between 1
    // and 2.5 s histogram_quantile spreads the acks evenly, and a p99 of 1.1 s read as above 2 s
    // while one of 2.4 s read as below it (test/ops/slow-ack-alert.test.ts).
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 2.5, 5],
    registers: [registry],
  });
  const batchSize = new Histogram({
    name: `${METRIC_PREFIX}webhook_commit_batch_size`,
    help: 'Deliveries committed per ledger transaction (group commit)',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
    registers: [registry],
  });
  const commitSeconds = new Histogram({
    name: `${METRIC_PREFIX}ledger_commit_duration_seconds`,
    help: 'Time from sending a batch of deliveries to the ledger until its commit (the part of the ack spent in Postgres)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const keyRefreshes = new Counter({
    name: `${METRIC_PREFIX}webhook_key_refreshes_total`,
    help: 'Fetches of the signing secrets from GET /webhooks/keys, by outcome (changed, unchanged, failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of ['changed', 'unchanged', 'failed']) keyRefreshes.inc({ outcome }, 0);
  const unparsed = new Counter({
    name: `${METRIC_PREFIX}webhook_deliveries_unparsed_total`,
    help: 'Deliveries stored without their typed row (unknown topic, or a shape that drifted from the spec), by topic family and reason; a provider change shows here',
    labelNames: ['topic_family', 'reason'] as const,
    registers: [registry],
  });
  for (const [family, reason] of UNPARSED_SERIES) unparsed.labels(family, reason).inc(0);
  return { deliveries, ackSeconds, batchSize, commitSeconds, keyRefreshes, unparsed };
}
