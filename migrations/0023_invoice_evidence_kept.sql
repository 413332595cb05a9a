-- Sets the invoice rules read (each invoice's facts, each reference's latest factoring event,
-- every invoice reference), kept between reconcile passes so a pass recomputes only what new events
-- touch (src/reconcile/kept-set.ts). Expand: a release before it neither reads nor writes them, and
-- the first pass of a release that does is a full one (another release judged last) and fills them.
CREATE TABLE "reconcile_factoring_latest" (
	"environment" "provider_environment" NOT NULL,
	"ref" text NOT NULL,
	"topic" text NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	"invoice_amount_cents" bigint,
	CONSTRAINT "reconcile_factoring_latest_environment_ref_pk" PRIMARY KEY("environment","ref")
);
--> statement-breakpoint
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
--> statement-breakpoint
CREATE TABLE "reconcile_invoice_refs" (
	"environment" "provider_environment" NOT NULL,
	"ref" text NOT NULL,
	CONSTRAINT "reconcile_invoice_refs_environment_ref_pk" PRIMARY KEY("environment","ref")
);
