/**
 * The version of what classify.ts and typed-rows.ts make of a raw body. Every delivery records the
 * version that classified it (webhook_deliveries.parser_version; 0 for rows stored before it was
 * recorded). Raise it with any change to classification (a topic, a schema, the event key) or to the
 * typed rows: the daemon then re-classifies the stored unparsed deliveries older than it by itself
 * (src/reparse), so what an earlier release could not read is reconciled after the upgrade.
 *
 * 1: exact amounts as JSON numbers as well as strings (payloads.ts), hostile values named per field.
 */
export const PARSER_VERSION = 1;
