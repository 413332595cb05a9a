-- The event is now the applied delivery itself (backfilled by 0004): at most one per key.
CREATE UNIQUE INDEX "webhook_deliveries_event_uq" ON "webhook_deliveries" USING btree ("environment","event_key") WHERE "webhook_deliveries"."applied";--> statement-breakpoint
DROP INDEX "webhook_deliveries_event_idx";--> statement-breakpoint
DROP TABLE "webhook_events" CASCADE;
