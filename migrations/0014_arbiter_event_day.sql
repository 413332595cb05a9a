-- The applied-once arbiter leads with the event's day (src/ledger/schema/deliveries.ts says why).
-- webhook_event_day is the one definition of that day, used by every statement that claims, looks
-- up or releases a claim: the first ten characters of event_time_sortable ('YYYY-MM-DD'), '' for an
-- event without a time. Plain text, never a cast, so no stored value can make it fail.
CREATE FUNCTION "webhook_event_day"("event_time_sortable" text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT left(coalesce($1, ''), 10) $$;
--> statement-breakpoint
ALTER TABLE "webhook_applied_events" ADD COLUMN "event_day" text;--> statement-breakpoint
-- The day of each existing claim from its applied delivery; a claim whose delivery retention has
-- dropped takes it from the event's typed row (every applied event with a time has one); the rest
-- are events without a time, whose day is ''.
UPDATE "webhook_applied_events" a SET "event_day" = coalesce(
  (SELECT webhook_event_day(d."event_time_sortable") FROM "webhook_deliveries" d WHERE d."id" = a."delivery_id" AND d."received_at" = a."received_at"),
  (SELECT webhook_event_day(t."event_time_sortable") FROM "order_events" t WHERE t."environment" = a."environment" AND t."event_key" = a."event_key"),
  (SELECT webhook_event_day(t."event_time_sortable") FROM "invoice_events" t WHERE t."environment" = a."environment" AND t."event_key" = a."event_key"),
  (SELECT webhook_event_day(t."event_time_sortable") FROM "payout_events" t WHERE t."environment" = a."environment" AND t."event_key" = a."event_key"),
  (SELECT webhook_event_day(t."event_time_sortable") FROM "billing_configuration_events" t WHERE t."environment" = a."environment" AND t."event_key" = a."event_key"),
  '');--> statement-breakpoint
ALTER TABLE "webhook_applied_events" ALTER COLUMN "event_day" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_applied_events" DROP CONSTRAINT "webhook_applied_events_environment_event_key_pk";--> statement-breakpoint
ALTER TABLE "webhook_applied_events" ADD CONSTRAINT "webhook_applied_events_pk" PRIMARY KEY("environment","event_day","event_key");
