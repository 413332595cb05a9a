CREATE TYPE "public"."payout_doc_type" AS ENUM('invoice', 'credit_note', 'buyer_payment', 'dispute');--> statement-breakpoint
CREATE TYPE "public"."payout_report_format" AS ENUM('csv', 'xlsx');--> statement-breakpoint
ALTER TYPE "public"."discrepancy_kind" ADD VALUE 'invoice_not_paid_out';--> statement-breakpoint
ALTER TYPE "public"."discrepancy_kind" ADD VALUE 'invoice_paid_out_twice';--> statement-breakpoint
ALTER TYPE "public"."discrepancy_kind" ADD VALUE 'payout_pays_canceled_invoice';--> statement-breakpoint
ALTER TYPE "public"."discrepancy_kind" ADD VALUE 'buyer_paid_merchant_directly';--> statement-breakpoint
ALTER TYPE "public"."discrepancy_kind" ADD VALUE 'payout_deduction_mismatch';--> statement-breakpoint
ALTER TYPE "public"."discrepancy_kind" ADD VALUE 'payout_report_mismatch';--> statement-breakpoint
CREATE TABLE "payout_report_rows" (
	"environment" "provider_environment" NOT NULL,
	"report_id" bigint NOT NULL,
	"line" integer NOT NULL,
	"payout_uuid" uuid NOT NULL,
	"order_no" text,
	"doc_no" text NOT NULL,
	"doc_type" "payout_doc_type" NOT NULL,
	"currency" text,
	"transaction_amount_cents" bigint NOT NULL,
	"discount_rate_micros" integer,
	"mdr_rate_micros" integer,
	"transaction_fee_cents" bigint NOT NULL,
	"gross_purchase_price_cents" bigint NOT NULL,
	"discount_cents" bigint NOT NULL,
	"vat_on_discount_cents" bigint NOT NULL,
	"transfer_amount_cents" bigint NOT NULL,
	"total_deductions_cents" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payout_reports" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"sha256" text NOT NULL,
	"file_name" text,
	"format" "payout_report_format" NOT NULL,
	"imported_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"row_count" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "payout_report_rows" ADD CONSTRAINT "payout_report_rows_report_id_payout_reports_id_fk" FOREIGN KEY ("report_id") REFERENCES "public"."payout_reports"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payout_report_rows_doc_uq" ON "payout_report_rows" USING btree ("environment","payout_uuid","doc_type","doc_no");--> statement-breakpoint
CREATE INDEX "payout_report_rows_doc_idx" ON "payout_report_rows" USING btree ("environment","doc_no");--> statement-breakpoint
CREATE INDEX "payout_report_rows_report_idx" ON "payout_report_rows" USING btree ("report_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payout_reports_file_uq" ON "payout_reports" USING btree ("environment","sha256");