CREATE TABLE "statement_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"entry_key" text NOT NULL,
	"statement_id" bigint NOT NULL,
	"account_iban" text,
	"booking_date" date NOT NULL,
	"currency" text NOT NULL,
	"direction" "statement_direction" NOT NULL,
	"amount_cents" bigint NOT NULL,
	"entry_reference" text,
	"lines_entry_key" text NOT NULL,
	"match" text NOT NULL
);
--> statement-breakpoint
DROP INDEX "statement_lines_key_uq";--> statement-breakpoint
ALTER TABLE "bank_statements" ADD COLUMN "lines_new" integer;--> statement-breakpoint
ALTER TABLE "bank_statements" ADD COLUMN "lines_known" integer;--> statement-breakpoint
ALTER TABLE "bank_statements" ADD COLUMN "lines_overlap" integer;--> statement-breakpoint
ALTER TABLE "statement_lines" ADD COLUMN "entry_key" text;--> statement-breakpoint
-- Lines stored before: a split batch's lines (tx_index > 0) join the line of tx_index 0 of the same
-- file, entry index, account, date, currency and direction when exactly one such line exists (a file
-- of several statements may repeat an entry index); every other line is an entry of its own.
UPDATE "statement_lines" l SET "entry_key" = g.key
FROM (
  SELECT "statement_id", "entry_index", "account_iban", "booking_date", "currency", "direction",
         min("position_key") FILTER (WHERE "tx_index" = 0) AS key
  FROM "statement_lines"
  GROUP BY "statement_id", "entry_index", "account_iban", "booking_date", "currency", "direction"
  HAVING count(*) FILTER (WHERE "tx_index" = 0) = 1 AND count(*) FILTER (WHERE "tx_index" > 0) > 0
) g
WHERE l."statement_id" = g."statement_id" AND l."entry_index" = g."entry_index" AND l."account_iban" IS NOT DISTINCT FROM g."account_iban"
  AND l."booking_date" = g."booking_date" AND l."currency" = g."currency" AND l."direction" = g."direction";--> statement-breakpoint
UPDATE "statement_lines" SET "entry_key" = "position_key" WHERE "entry_key" IS NULL;--> statement-breakpoint
ALTER TABLE "statement_lines" ALTER COLUMN "entry_key" SET NOT NULL;--> statement-breakpoint
-- Their entries, each holding its own lines. A split batch's lines carry '<entry reference>/<n>'
-- (or their transaction's own reference): the entry's is the common part when all have that form, else none.
INSERT INTO "statement_entries" ("environment", "entry_key", "statement_id", "account_iban", "booking_date", "currency", "direction",
                                 "amount_cents", "entry_reference", "lines_entry_key", "match")
SELECT "environment", "entry_key", min("statement_id"), min("account_iban"), min("booking_date"), min("currency"), min("direction"::text)::"statement_direction",
       sum("amount_cents"),
       CASE WHEN count(*) = 1 THEN CASE WHEN upper(min("bank_reference")) <> 'NONREF' THEN min("bank_reference") END
            WHEN count(*) FILTER (WHERE "bank_reference" ~ '/[0-9]+$') = count(*)
             AND count(DISTINCT regexp_replace("bank_reference", '/[0-9]+$', '')) = 1
            THEN min(regexp_replace("bank_reference", '/[0-9]+$', '')) END,
       "entry_key", 'new'
FROM "statement_lines" GROUP BY "environment", "entry_key";--> statement-breakpoint
ALTER TABLE "statement_periods" ADD COLUMN "account_iban" text;--> statement-breakpoint
ALTER TABLE "statement_periods" ADD COLUMN "first_whole_day" date;--> statement-breakpoint
ALTER TABLE "statement_periods" ADD COLUMN "last_whole_day" date;--> statement-breakpoint
-- Earlier files' periods get their account only when all of the file's lines name the same one.
UPDATE "statement_periods" p SET "account_iban" = a.account
FROM (SELECT "statement_id", min("account_iban") AS account FROM "statement_lines" GROUP BY "statement_id"
      HAVING count(DISTINCT "account_iban") = 1 AND count(*) = count("account_iban")) a
WHERE p."statement_id" = a."statement_id";--> statement-breakpoint
ALTER TABLE "statement_entries" ADD CONSTRAINT "statement_entries_statement_id_bank_statements_id_fk" FOREIGN KEY ("statement_id") REFERENCES "public"."bank_statements"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "statement_entries_key_uq" ON "statement_entries" USING btree ("environment","entry_key");--> statement-breakpoint
CREATE INDEX "statement_entries_booking_idx" ON "statement_entries" USING btree ("environment","account_iban","booking_date","amount_cents");--> statement-breakpoint
CREATE INDEX "statement_lines_entry_idx" ON "statement_lines" USING btree ("environment","entry_key");--> statement-breakpoint
CREATE INDEX "statement_periods_account_idx" ON "statement_periods" USING btree ("environment","account_iban","first_whole_day");