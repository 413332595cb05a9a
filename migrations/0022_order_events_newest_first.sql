-- order_events_order_idx holds each order's events newest first, so state_mismatch reads every
-- order's latest event in a forward scan (src/schema/events.ts says why). Building it blocks writes
-- to order_events meanwhile: 3 s at 1,000,000 orders, 43 s at 10,000,000 (bench/reconcile seed);
-- deliveries that wait past the answer deadline get 503 and are sent again by the provider.
DROP INDEX "order_events_order_idx";--> statement-breakpoint
CREATE INDEX "order_events_order_idx" ON "order_events" USING btree ("environment","order_uuid","event_time_sortable" DESC NULLS FIRST,"event_key" DESC NULLS FIRST,"order_state","received_at");--> statement-breakpoint
-- How many orders order_events holds, as a fraction of its rows (about two events per order:
-- authorized, then confirmed or declined) instead of ANALYZE's estimate. ANALYZE samples 30,000
-- rows; with two events per order it estimated 955,897 orders in a ledger of 10,000,000. The
-- planner then expected 3% of the orders in state_mismatch's join and looked each order's snapshot
-- up by index: 10,000,000 random lookups (the statement on a cold cache: 105 s; joined by hash with
-- this estimate: 35 s; bench/README.md, "10,000,000 orders"). A negative n_distinct is a ratio to
-- the row count, so the estimate grows with the ledger.
ALTER TABLE "order_events" ALTER COLUMN "order_uuid" SET (n_distinct = -0.5);--> statement-breakpoint
-- ANALYZE reads the setting: a sample now, not at autovacuum's next visit.
ANALYZE "order_events";
