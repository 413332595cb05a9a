-- Lines imported before this migration have no known position: each keeps its old key as its
-- position (unique, as line_key was) and index 0; new imports compute both identities (src/statements/line-key.ts).
ALTER TABLE "bank_statements" ADD COLUMN "statement_count" integer;--> statement-breakpoint
ALTER TABLE "statement_lines" ADD COLUMN "position_key" text;--> statement-breakpoint
ALTER TABLE "statement_lines" ADD COLUMN "entry_index" integer;--> statement-breakpoint
ALTER TABLE "statement_lines" ADD COLUMN "tx_index" integer;--> statement-breakpoint
UPDATE "statement_lines" SET "position_key" = 'before-positions:' || "line_key", "entry_index" = 0, "tx_index" = 0;--> statement-breakpoint
ALTER TABLE "statement_lines" ALTER COLUMN "position_key" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "statement_lines" ALTER COLUMN "entry_index" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "statement_lines" ALTER COLUMN "tx_index" SET NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "statement_lines_position_uq" ON "statement_lines" USING btree ("environment","position_key");
