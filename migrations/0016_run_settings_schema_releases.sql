-- Expand only (docs/upgrading.md): a new table and two nullable columns; the release before keeps working.
CREATE TABLE "schema_releases" (
	"migration_when" bigint PRIMARY KEY NOT NULL,
	"migration_tag" text NOT NULL,
	"requires_when" bigint NOT NULL,
	"requires_tag" text NOT NULL,
	"release" text NOT NULL,
	"recorded_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "reconcile_runs" ADD COLUMN "settings" jsonb;--> statement-breakpoint
ALTER TABLE "reconcile_runs" ADD COLUMN "origin" text;