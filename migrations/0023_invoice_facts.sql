-- Each invoice's facts as the reconcile pass derives them from invoice_events, kept between passes
-- so a pass recomputes only the invoices with new events (src/reconcile/rules/invoice-common.ts).
-- Expand: a release before it does not read or write the table; the first pass of a release that
-- does is a full one (another release judged last) and fills it.
CREATE TABLE "reconcile_invoice_facts" (
	"environment" "provider_environment" NOT NULL,
	"invoice_uuid" uuid NOT NULL,
	"ref" text NOT NULL,
	"order_uuid" uuid,
	"created_at" timestamp (6) with time zone NOT NULL,
	"canceled_at" timestamp (6) with time zone,
	"gross_amount_cents" bigint,
	CONSTRAINT "reconcile_invoice_facts_environment_invoice_uuid_pk" PRIMARY KEY("environment","invoice_uuid")
);
