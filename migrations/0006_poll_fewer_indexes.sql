DROP INDEX "order_snapshots_last_run_idx";--> statement-breakpoint
DROP INDEX "order_state_observations_uq";--> statement-breakpoint
DROP INDEX "order_state_observations_order_idx";--> statement-breakpoint
-- The surrogate id goes first: dropping it drops its primary key, so the natural key can take its place.
ALTER TABLE "order_state_observations" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "order_state_observations" ADD CONSTRAINT "order_state_observations_pk" PRIMARY KEY("environment","order_uuid","state","poll_run_id");
