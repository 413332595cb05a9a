CREATE TYPE "public"."statement_direction" AS ENUM('credit', 'debit');--> statement-breakpoint
CREATE TYPE "public"."statement_format" AS ENUM('camt053', 'mt940', 'csv');--> statement-breakpoint
CREATE TABLE "bank_statements" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"file_sha256" text NOT NULL,
	"file_name" text,
	"format" "statement_format" NOT NULL,
	"account_iban" text,
	"period_from" timestamp (6) with time zone,
	"period_to" timestamp (6) with time zone,
	"imported_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"line_count" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "statement_lines" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"statement_id" bigint NOT NULL,
	"line_key" text NOT NULL,
	"account_iban" text,
	"booking_date" date NOT NULL,
	"value_date" date,
	"amount_cents" bigint NOT NULL,
	"currency" text NOT NULL,
	"direction" "statement_direction" NOT NULL,
	"counterparty_iban" text,
	"counterparty_name" text,
	"end_to_end_id" text,
	"bank_reference" text,
	"remittance" text,
	"sepa_reference" text,
	"imported_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "statement_lines" ADD CONSTRAINT "statement_lines_statement_id_bank_statements_id_fk" FOREIGN KEY ("statement_id") REFERENCES "public"."bank_statements"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "bank_statements_file_uq" ON "bank_statements" USING btree ("environment","file_sha256");--> statement-breakpoint
CREATE UNIQUE INDEX "statement_lines_key_uq" ON "statement_lines" USING btree ("environment","line_key");--> statement-breakpoint
CREATE INDEX "statement_lines_sepa_idx" ON "statement_lines" USING btree ("environment","sepa_reference");--> statement-breakpoint
CREATE INDEX "statement_lines_counterparty_idx" ON "statement_lines" USING btree ("environment","counterparty_iban");--> statement-breakpoint
CREATE INDEX "statement_lines_statement_idx" ON "statement_lines" USING btree ("statement_id");