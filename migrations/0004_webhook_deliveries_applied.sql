ALTER TABLE "webhook_deliveries" ADD COLUMN "applied" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Backfill: a delivery was applied when its event names it as the first delivery.
UPDATE "webhook_deliveries" AS w SET "applied" = true FROM "webhook_events" AS e WHERE e."environment" = w."environment" AND e."event_key" = w."event_key" AND e."first_delivery_id" = w."id";--> statement-breakpoint
CREATE INDEX "webhook_deliveries_retry_idx" ON "webhook_deliveries" USING btree ("environment","received_at") WHERE "webhook_deliveries"."event_key" is not null and not "webhook_deliveries"."applied";
