ALTER TABLE "reconcile_runs" ADD COLUMN "mode" text DEFAULT 'full' NOT NULL;--> statement-breakpoint
CREATE INDEX "order_events_received_idx" ON "order_events" USING btree ("environment","received_at");--> statement-breakpoint
CREATE INDEX "order_snapshots_state_since_idx" ON "order_snapshots" USING btree ("environment","state_since");--> statement-breakpoint
CREATE INDEX "order_state_observations_observed_idx" ON "order_state_observations" USING btree ("environment","observed_at");