ALTER TABLE "webhook_events" DROP COLUMN "id";--> statement-breakpoint
DROP INDEX "webhook_events_key_uq";--> statement-breakpoint
DROP INDEX "webhook_events_entity_idx";--> statement-breakpoint
DROP INDEX "webhook_events_first_received_idx";--> statement-breakpoint
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_environment_event_key_pk" PRIMARY KEY("environment","event_key");
