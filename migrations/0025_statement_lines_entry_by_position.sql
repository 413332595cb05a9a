-- Expand only (docs/upgrading.md). Since key format 2 an entry key is the first 41 characters of
-- its lines' position keys (src/statements/line-key.ts), so the import finds an entry's lines by a
-- range of statement_lines_position_uq; only lines stored with older keys keep an index by entry
-- key. The full index cost every stored line an insertion and 116 bytes (bench/README.md,
-- statements). The release before, during a rolling update, still finds the lines it asks for, but
-- by scanning statement_lines for each entry a statement it imports finds already stored.
DROP INDEX "statement_lines_entry_idx";--> statement-breakpoint
CREATE INDEX "statement_lines_older_entry_idx" ON "statement_lines" USING btree ("environment","entry_key") WHERE "statement_lines"."entry_key" <> left("statement_lines"."position_key", 41);