-- webhook_deliveries becomes a table partitioned by month of received_at (drizzle cannot express
-- partitioning, so this migration is written by hand; src/ledger/schema/deliveries.ts carries the
-- same columns, keys and indexes). Every existing row is kept: the table is rebuilt and the rows
-- moved in this migration's transaction. Partition bounds are UTC months; names are
-- webhook_deliveries_pYYYY_MM (src/ledger/partition-months.ts), plus a default partition that takes
-- a delivery whose month has no partition yet, so no delivery is ever refused for its date.
--
-- A unique index of a partitioned table must include the partition key, so the applied-once
-- arbiter (formerly the unique partial index webhook_deliveries_event_uq) moves to its own
-- unpartitioned table, webhook_applied_events, filled here from the applied deliveries.
CREATE TABLE "webhook_applied_events" (
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"delivery_id" bigint NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	CONSTRAINT "webhook_applied_events_environment_event_key_pk" PRIMARY KEY("environment","event_key")
);
--> statement-breakpoint
INSERT INTO "webhook_applied_events" ("environment", "event_key", "delivery_id", "received_at")
SELECT "environment", "event_key", "id", "received_at" FROM "webhook_deliveries" WHERE "applied" AND "event_key" IS NOT NULL;
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" RENAME TO "webhook_deliveries_unpartitioned";--> statement-breakpoint
ALTER TABLE "webhook_deliveries_unpartitioned" DROP CONSTRAINT "webhook_deliveries_pkey";--> statement-breakpoint
DROP INDEX "webhook_deliveries_event_uq";--> statement-breakpoint
DROP INDEX "webhook_deliveries_received_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_retry_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_unparsed_idx";--> statement-breakpoint
-- The sequence outlives the old table (the receiver draws ids from it by name).
ALTER SEQUENCE "webhook_deliveries_id_seq" OWNED BY NONE;--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigint DEFAULT nextval('webhook_deliveries_id_seq') NOT NULL,
	"delivery_uuid" uuid NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"received_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"source_ip" text,
	"headers" jsonb NOT NULL,
	"raw_body" "bytea" NOT NULL,
	"signature_valid" boolean NOT NULL,
	"signature_key_fingerprint" text,
	"topic" text,
	"parse_status" "webhook_parse_status" NOT NULL,
	"parse_error" text,
	"event_key" text,
	"entity_type" text,
	"entity_id" text,
	"event_time" text,
	"event_time_sortable" text,
	"applied" boolean DEFAULT false NOT NULL,
	"parser_version" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "webhook_deliveries_id_received_at_pk" PRIMARY KEY("id","received_at")
) PARTITION BY RANGE ("received_at");
--> statement-breakpoint
ALTER SEQUENCE "webhook_deliveries_id_seq" OWNED BY "webhook_deliveries"."id";--> statement-breakpoint
CREATE TABLE "webhook_deliveries_default" PARTITION OF "webhook_deliveries" DEFAULT;--> statement-breakpoint
-- One partition per month the existing rows cover, and the current month: the daemon creates the
-- months ahead at start (src/ledger/partitions.ts).
-- Each month is a UTC timestamp (without time zone) and its bounds are written as UTC instants
-- ('…+00'), so nothing depends on the session's TimeZone: `timestamptz + interval '1 month'` is
-- computed in that zone, and on a Europe/Berlin session October's upper bound came out an hour
-- past November's lower one (the migration failed: partitions overlap) and March's ended at
-- 23:00Z, leaving the last hour of March in the default partition for good
-- (test/ledger/partition-migration-timezone.test.ts).
DO $$
DECLARE
  m timestamp;
BEGIN
  FOR m IN
    SELECT DISTINCT date_trunc('month', "received_at" AT TIME ZONE 'UTC') FROM "webhook_deliveries_unpartitioned"
    UNION SELECT date_trunc('month', now() AT TIME ZONE 'UTC')
  LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "webhook_deliveries" FOR VALUES FROM (%L) TO (%L)',
      'webhook_deliveries_p' || to_char(m, 'YYYY_MM'),
      to_char(m, 'YYYY-MM-DD HH24:MI:SS') || '+00', to_char(m + interval '1 month', 'YYYY-MM-DD HH24:MI:SS') || '+00');
  END LOOP;
END $$;
--> statement-breakpoint
INSERT INTO "webhook_deliveries" ("id", "delivery_uuid", "environment", "received_at", "source_ip", "headers", "raw_body",
  "signature_valid", "signature_key_fingerprint", "topic", "parse_status", "parse_error", "event_key", "entity_type", "entity_id",
  "event_time", "event_time_sortable", "applied", "parser_version")
SELECT "id", "delivery_uuid", "environment", "received_at", "source_ip", "headers", "raw_body",
  "signature_valid", "signature_key_fingerprint", "topic", "parse_status", "parse_error", "event_key", "entity_type", "entity_id",
  "event_time", "event_time_sortable", "applied", "parser_version"
FROM "webhook_deliveries_unpartitioned";
--> statement-breakpoint
DROP TABLE "webhook_deliveries_unpartitioned";--> statement-breakpoint
-- Indexes after the rows (one sort per index instead of row-by-row maintenance); on the parent, so
-- every partition, present and future, gets them.
CREATE INDEX "webhook_deliveries_received_idx" ON "webhook_deliveries" USING btree ("environment","received_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_retry_idx" ON "webhook_deliveries" USING btree ("environment","event_key") WHERE "webhook_deliveries"."event_key" is not null and not "webhook_deliveries"."applied";--> statement-breakpoint
CREATE INDEX "webhook_deliveries_unparsed_idx" ON "webhook_deliveries" USING btree ("environment","id") WHERE "webhook_deliveries"."parse_status" <> 'parsed';
