CREATE INDEX "factoring_events_received_brin" ON "factoring_events" USING brin ("received_at");--> statement-breakpoint
CREATE INDEX "invoice_events_received_brin" ON "invoice_events" USING brin ("received_at");--> statement-breakpoint
CREATE INDEX "payout_events_received_brin" ON "payout_events" USING brin ("received_at");