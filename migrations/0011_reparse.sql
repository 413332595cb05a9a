CREATE TABLE "reparse_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"started_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (6) with time zone,
	"status" text DEFAULT 'running' NOT NULL,
	"trigger" text NOT NULL,
	"status_filter" text NOT NULL,
	"since" timestamp (6) with time zone,
	"parser_version" integer NOT NULL,
	"examined" integer DEFAULT 0 NOT NULL,
	"outcomes" jsonb,
	"changes" jsonb,
	"error" text
);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "parser_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_unparsed_idx" ON "webhook_deliveries" USING btree ("environment","id") WHERE "webhook_deliveries"."parse_status" <> 'parsed';