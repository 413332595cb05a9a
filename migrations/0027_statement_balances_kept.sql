-- Expand only (docs/upgrading.md). Each statement's opening and closing balances, so a statement
-- that continues a stored one (its opening balance is the other's closing balance, both of one
-- day) is told from a copy of it: both cover the day wholly, and before this table the second
-- statement's bookings equal in day and amount to the first's were taken for them and not stored
-- (src/statements/consecutive.ts). Statements imported before it, or by the release before during a
-- rolling update, have no row and are matched as before; the release before reads nothing here.
CREATE TABLE "statement_balances" (
	"statement_id" bigint NOT NULL,
	"section_index" integer NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"statement_key" text NOT NULL,
	"account_iban" text,
	"opening_kind" text,
	"opening_date" date,
	"opening_currency" text,
	"opening_cents" bigint,
	"closing_kind" text,
	"closing_date" date,
	"closing_currency" text,
	"closing_cents" bigint,
	"balanced" boolean NOT NULL,
	CONSTRAINT "statement_balances_statement_id_section_index_pk" PRIMARY KEY("statement_id","section_index")
);
--> statement-breakpoint
ALTER TABLE "statement_balances" ADD CONSTRAINT "statement_balances_statement_id_bank_statements_id_fk" FOREIGN KEY ("statement_id") REFERENCES "public"."bank_statements"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "statement_balances_key_idx" ON "statement_balances" USING btree ("environment","statement_key");