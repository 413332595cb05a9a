ALTER TYPE "public"."discrepancy_entity_type" ADD VALUE 'statement';--> statement-breakpoint
ALTER TYPE "public"."discrepancy_kind" ADD VALUE 'statement_unbalanced';--> statement-breakpoint
ALTER TABLE "bank_statements" ADD COLUMN "balances_unchecked" integer;--> statement-breakpoint
ALTER TABLE "bank_statements" ADD COLUMN "statements_unbalanced" integer;