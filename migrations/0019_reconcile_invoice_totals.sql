ALTER TABLE "reconcile_runs" ADD COLUMN "invoice_totals" jsonb;--> statement-breakpoint
CREATE INDEX "reconcile_runs_started_idx" ON "reconcile_runs" USING btree ("environment","started_at");