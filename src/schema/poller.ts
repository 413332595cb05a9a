import { bigint, bigserial, index, integer, pgEnum, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { providerEnvironment } from './common.js';

export const pollRunStatus = pgEnum('poll_run_status', ['running', 'complete', 'failed', 'aborted']);

/** One row per poll of GET /api/v1/orders; only a `complete` run may prove that an order is absent. */
export const pollRuns = pgTable(
  'poll_runs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    environment: providerEnvironment('environment').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true, precision: 6 }),
    status: pollRunStatus('status').notNull().default('running'),
    pages: integer('pages').notNull().default(0),
    orders: integer('orders').notNull().default(0),
    requests: integer('requests').notNull().default(0),
    throttled: integer('throttled').notNull().default(0),
    retries: integer('retries').notNull().default(0),
    holder: text('holder'),
    error: text('error'),
  },
  (t) => [index('poll_runs_env_idx').on(t.environment, t.status, t.startedAt)],
);

/** What the API last said about each order. */
export const orderSnapshots = pgTable(
  'order_snapshots',
  {
    environment: providerEnvironment('environment').notNull(),
    orderUuid: uuid('order_uuid').notNull(),
    state: text('state').notNull(),
    externalReferenceId: text('external_reference_id'),
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true, precision: 6 }).notNull(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, precision: 6 }).notNull(),
    firstSeenRunId: bigint('first_seen_run_id', { mode: 'number' }).notNull(),
    lastSeenRunId: bigint('last_seen_run_id', { mode: 'number' }).notNull(),
    /** When the poller first saw the current state: the grace period for its webhook runs from here. */
    stateSince: timestamp('state_since', { withTimezone: true, precision: 6 }).notNull(),
    stateSinceRunId: bigint('state_since_run_id', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.environment, t.orderUuid] }),
    // No index on last_seen_run_id: every poll rewrites it for every order, and an index on it would
    // make each of those updates a non-HOT update with a new index entry. The reconciler's "not
    // listed by the latest run" reads find few rows through a scan (~0.1 s at 1,000,000 orders).
    // Reconciliation: orders whose state changed or crossed the grace period since the last pass.
    index('order_snapshots_state_since_idx').on(t.environment, t.stateSince),
  ],
);

/** Every state change the poller observed, with the run that saw it. */
export const orderStateObservations = pgTable(
  'order_state_observations',
  {
    environment: providerEnvironment('environment').notNull(),
    orderUuid: uuid('order_uuid').notNull(),
    state: text('state').notNull(),
    previousState: text('previous_state'),
    observedAt: timestamp('observed_at', { withTimezone: true, precision: 6 }).notNull(),
    pollRunId: bigint('poll_run_id', { mode: 'number' }).notNull(),
  },
  (t) => [
    // The natural key is the primary key (no surrogate id, no second per-order index): a first poll
    // writes one observation per order, so every index here is paid 100,000 times per 1,000 pages.
    primaryKey({ name: 'order_state_observations_pk', columns: [t.environment, t.orderUuid, t.state, t.pollRunId] }),
    index('order_state_observations_observed_idx').on(t.environment, t.observedAt),
  ],
);
