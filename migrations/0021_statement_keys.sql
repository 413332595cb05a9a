-- Expand only (docs/upgrading.md). key_format: files imported before it keep null, the older key
-- form (src/statements/line-key.ts); a release before it, during a rolling update, writes null too,
-- and its keys are the older form. The two indexes served no query (src/schema/statements.ts), and
-- each cost every stored line an insertion; the release before reads nothing through them.
DROP INDEX "statement_lines_counterparty_idx";--> statement-breakpoint
DROP INDEX "statement_lines_statement_idx";--> statement-breakpoint
ALTER TABLE "bank_statements" ADD COLUMN "key_format" smallint;
