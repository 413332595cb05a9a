CREATE TYPE "public"."provider_environment" AS ENUM('sandbox', 'production');--> statement-breakpoint
CREATE TYPE "public"."webhook_parse_status" AS ENUM('parsed', 'unknown_topic', 'invalid_shape');--> statement-breakpoint
CREATE TYPE "public"."poll_run_status" AS ENUM('running', 'complete', 'failed', 'aborted');--> statement-breakpoint
CREATE TYPE "public"."discrepancy_entity_type" AS ENUM('order', 'invoice', 'payout', 'statement_line', 'webhook_delivery');--> statement-breakpoint
CREATE TYPE "public"."discrepancy_kind" AS ENUM('missed_webhook', 'state_mismatch', 'orphan_webhook', 'duplicate_event', 'duplicate_delivery', 'payout_not_on_statement', 'statement_credit_without_payout', 'payout_amount_mismatch', 'payout_cancelled_but_credited', 'payout_unknown_invoice');--> statement-breakpoint
CREATE TYPE "public"."discrepancy_status" AS ENUM('open', 'resolved', 'acknowledged');--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
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
	"event_time_sortable" text
);
--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"topic" text NOT NULL,
	"entity_type" text NOT NULL,
	"entity_id" text NOT NULL,
	"event_time" text,
	"event_time_sortable" text,
	"first_delivery_id" bigint NOT NULL,
	"first_received_at" timestamp (6) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "applicant_events" (
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"topic" text NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	"applicant_uuid" uuid NOT NULL,
	"state" text,
	"external_reference_id" text,
	"first_name" text,
	"last_name" text,
	"email" text,
	"phone" text,
	"reason" text,
	"buyer_uuid" uuid,
	"buyer" jsonb,
	CONSTRAINT "applicant_events_environment_event_key_pk" PRIMARY KEY("environment","event_key")
);
--> statement-breakpoint
CREATE TABLE "billing_configuration_events" (
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"topic" text NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	"billing_configuration_uuid" uuid NOT NULL,
	"buyer_uuid" uuid,
	"schedule" text,
	"due_in_days" integer,
	"generation_delay_days" integer,
	"payment_method_statement" text,
	"event_time" text,
	"event_time_sortable" text,
	CONSTRAINT "billing_configuration_events_environment_event_key_pk" PRIMARY KEY("environment","event_key")
);
--> statement-breakpoint
CREATE TABLE "buyer_events" (
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"topic" text NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	"buyer_uuid" uuid NOT NULL,
	"state" text,
	"external_reference_id" text,
	"company_name" text,
	"first_name" text,
	"last_name" text,
	"purchasing_limit_cents" bigint,
	"balance_cents" bigint,
	"max_collections_state" text,
	"max_purchase_value_cents" bigint,
	CONSTRAINT "buyer_events_environment_event_key_pk" PRIMARY KEY("environment","event_key")
);
--> statement-breakpoint
CREATE TABLE "factoring_events" (
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"topic" text NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	"factoring_uuid" uuid NOT NULL,
	"invoice_external_reference_id" text,
	"invoice_uuid" uuid,
	"factoring_state" text,
	"invoice_amount_cents" bigint,
	"payment_method" text,
	"payment_terms_days" integer,
	"bank_account" jsonb,
	CONSTRAINT "factoring_events_environment_event_key_pk" PRIMARY KEY("environment","event_key")
);
--> statement-breakpoint
CREATE TABLE "invoice_events" (
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"topic" text NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	"invoice_uuid" uuid NOT NULL,
	"order_uuid" uuid,
	"external_reference_id" text,
	"event_time" text,
	"event_time_sortable" text,
	"gross_amount_cents" bigint,
	"amount_cents" bigint,
	CONSTRAINT "invoice_events_environment_event_key_pk" PRIMARY KEY("environment","event_key")
);
--> statement-breakpoint
CREATE TABLE "kyc_events" (
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"topic" text NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	"buyer_uuid" uuid NOT NULL,
	"kyc_state" text,
	"external_reference_id" text,
	CONSTRAINT "kyc_events_environment_event_key_pk" PRIMARY KEY("environment","event_key")
);
--> statement-breakpoint
CREATE TABLE "order_events" (
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"topic" text NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	"order_uuid" uuid NOT NULL,
	"order_state" text NOT NULL,
	"external_reference_id" text,
	"event_time" text NOT NULL,
	"event_time_sortable" text NOT NULL,
	"buyer_uuid" uuid,
	"buyer_name" text,
	"buyer_legal_form" text,
	"pending_reason_description" text,
	"net_term_days" integer,
	"bank_account" jsonb,
	"confirmation_link" text,
	CONSTRAINT "order_events_environment_event_key_pk" PRIMARY KEY("environment","event_key")
);
--> statement-breakpoint
CREATE TABLE "payout_events" (
	"environment" "provider_environment" NOT NULL,
	"event_key" text NOT NULL,
	"topic" text NOT NULL,
	"received_at" timestamp (6) with time zone NOT NULL,
	"payout_uuid" uuid NOT NULL,
	"status" text NOT NULL,
	"sepa_instruction_id" text,
	"amount_cents" bigint,
	"external_reference_ids" text[] NOT NULL,
	"event_time" text,
	"event_time_sortable" text,
	CONSTRAINT "payout_events_environment_event_key_pk" PRIMARY KEY("environment","event_key")
);
--> statement-breakpoint
CREATE TABLE "order_snapshots" (
	"environment" "provider_environment" NOT NULL,
	"order_uuid" uuid NOT NULL,
	"state" text NOT NULL,
	"external_reference_id" text,
	"first_seen_at" timestamp (6) with time zone NOT NULL,
	"last_seen_at" timestamp (6) with time zone NOT NULL,
	"first_seen_run_id" bigint NOT NULL,
	"last_seen_run_id" bigint NOT NULL,
	"state_since" timestamp (6) with time zone NOT NULL,
	"state_since_run_id" bigint NOT NULL,
	CONSTRAINT "order_snapshots_environment_order_uuid_pk" PRIMARY KEY("environment","order_uuid")
);
--> statement-breakpoint
CREATE TABLE "order_state_observations" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"order_uuid" uuid NOT NULL,
	"state" text NOT NULL,
	"previous_state" text,
	"observed_at" timestamp (6) with time zone NOT NULL,
	"poll_run_id" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "poll_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"started_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (6) with time zone,
	"status" "poll_run_status" DEFAULT 'running' NOT NULL,
	"pages" integer DEFAULT 0 NOT NULL,
	"orders" integer DEFAULT 0 NOT NULL,
	"requests" integer DEFAULT 0 NOT NULL,
	"throttled" integer DEFAULT 0 NOT NULL,
	"retries" integer DEFAULT 0 NOT NULL,
	"holder" text,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "discrepancies" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"kind" "discrepancy_kind" NOT NULL,
	"status" "discrepancy_status" DEFAULT 'open' NOT NULL,
	"entity_type" "discrepancy_entity_type" NOT NULL,
	"entity_id" text NOT NULL,
	"subject" text DEFAULT '' NOT NULL,
	"external_reference_id" text,
	"sepa_reference" text,
	"expected" text,
	"observed" text,
	"details" text NOT NULL,
	"evidence" jsonb,
	"acknowledged_evidence_hash" text,
	"evidence_hash" text,
	"first_detected_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"last_checked_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp (6) with time zone,
	"acknowledged_at" timestamp (6) with time zone,
	"acknowledged_by" text,
	"ack_note" text
);
--> statement-breakpoint
CREATE TABLE "discrepancy_history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"discrepancy_id" bigint NOT NULL,
	"at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"from_status" "discrepancy_status",
	"to_status" "discrepancy_status" NOT NULL,
	"actor" text NOT NULL,
	"reason" text NOT NULL,
	"evidence" jsonb
);
--> statement-breakpoint
CREATE TABLE "reconcile_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" "provider_environment" NOT NULL,
	"started_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (6) with time zone,
	"status" text DEFAULT 'running' NOT NULL,
	"opened" integer DEFAULT 0 NOT NULL,
	"resolved" integer DEFAULT 0 NOT NULL,
	"reopened" integer DEFAULT 0 NOT NULL,
	"error" text
);
--> statement-breakpoint
ALTER TABLE "discrepancy_history" ADD CONSTRAINT "discrepancy_history_discrepancy_id_discrepancies_id_fk" FOREIGN KEY ("discrepancy_id") REFERENCES "public"."discrepancies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("environment","event_key");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_received_idx" ON "webhook_deliveries" USING btree ("environment","received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_events_key_uq" ON "webhook_events" USING btree ("environment","event_key");--> statement-breakpoint
CREATE INDEX "webhook_events_entity_idx" ON "webhook_events" USING btree ("environment","entity_type","entity_id","event_time_sortable");--> statement-breakpoint
CREATE INDEX "webhook_events_first_received_idx" ON "webhook_events" USING btree ("environment","first_received_at");--> statement-breakpoint
CREATE INDEX "applicant_events_applicant_idx" ON "applicant_events" USING btree ("environment","applicant_uuid");--> statement-breakpoint
CREATE INDEX "buyer_events_buyer_idx" ON "buyer_events" USING btree ("environment","buyer_uuid");--> statement-breakpoint
CREATE INDEX "factoring_events_factoring_idx" ON "factoring_events" USING btree ("environment","factoring_uuid");--> statement-breakpoint
CREATE INDEX "invoice_events_invoice_idx" ON "invoice_events" USING btree ("environment","invoice_uuid");--> statement-breakpoint
CREATE INDEX "invoice_events_reference_idx" ON "invoice_events" USING btree ("environment","external_reference_id");--> statement-breakpoint
CREATE INDEX "kyc_events_buyer_idx" ON "kyc_events" USING btree ("environment","buyer_uuid");--> statement-breakpoint
CREATE INDEX "order_events_order_idx" ON "order_events" USING btree ("environment","order_uuid","event_time_sortable");--> statement-breakpoint
CREATE INDEX "order_events_state_idx" ON "order_events" USING btree ("environment","order_uuid","order_state");--> statement-breakpoint
CREATE INDEX "payout_events_payout_idx" ON "payout_events" USING btree ("environment","payout_uuid");--> statement-breakpoint
CREATE INDEX "payout_events_sepa_idx" ON "payout_events" USING btree ("environment","sepa_instruction_id");--> statement-breakpoint
CREATE INDEX "order_snapshots_last_run_idx" ON "order_snapshots" USING btree ("environment","last_seen_run_id");--> statement-breakpoint
CREATE UNIQUE INDEX "order_state_observations_uq" ON "order_state_observations" USING btree ("environment","order_uuid","state","poll_run_id");--> statement-breakpoint
CREATE INDEX "order_state_observations_order_idx" ON "order_state_observations" USING btree ("environment","order_uuid","observed_at");--> statement-breakpoint
CREATE INDEX "poll_runs_env_idx" ON "poll_runs" USING btree ("environment","status","started_at");--> statement-breakpoint
CREATE UNIQUE INDEX "discrepancies_identity_uq" ON "discrepancies" USING btree ("environment","kind","entity_type","entity_id","subject");--> statement-breakpoint
CREATE INDEX "discrepancies_status_idx" ON "discrepancies" USING btree ("environment","status","kind");--> statement-breakpoint
CREATE INDEX "discrepancies_detected_idx" ON "discrepancies" USING btree ("first_detected_at");--> statement-breakpoint
CREATE INDEX "discrepancy_history_discrepancy_idx" ON "discrepancy_history" USING btree ("discrepancy_id","at");