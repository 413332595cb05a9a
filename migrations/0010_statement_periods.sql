-- One row per statement of a file; earlier files keep their whole span as their one period.
CREATE TABLE "statement_periods" (
	"statement_id" bigint NOT NULL,
	"section_index" integer NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"period_from" timestamp (6) with time zone NOT NULL,
	"period_to" timestamp (6) with time zone NOT NULL,
	CONSTRAINT "statement_periods_statement_id_section_index_pk" PRIMARY KEY("statement_id","section_index")
);
--> statement-breakpoint
ALTER TABLE "statement_periods" ADD CONSTRAINT "statement_periods_statement_id_bank_statements_id_fk" FOREIGN KEY ("statement_id") REFERENCES "public"."bank_statements"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "statement_periods_env_idx" ON "statement_periods" USING btree ("environment","period_from");--> statement-breakpoint

-- Files imported before this migration are known only by their whole span: one period each.
INSERT INTO "statement_periods" ("statement_id", "section_index", "environment", "period_from", "period_to")
SELECT "id", 0, "environment", "period_from", "period_to" FROM "bank_statements"
WHERE "period_from" IS NOT NULL AND "period_to" IS NOT NULL;
