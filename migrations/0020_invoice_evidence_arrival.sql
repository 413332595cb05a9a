CREATE INDEX "factoring_events_received_idx" ON "factoring_events" USING btree ("environment","received_at");--> statement-breakpoint
CREATE INDEX "invoice_events_received_idx" ON "invoice_events" USING btree ("environment","received_at");--> statement-breakpoint
CREATE INDEX "payout_events_received_idx" ON "payout_events" USING btree ("environment","received_at");