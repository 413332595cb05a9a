/**
 * The version of what classify.ts and typed-rows.ts make of a raw body. Every delivery records the
 * version that classified it (webhook_deliveries.parser_version; 0 for rows stored before it was
 * recorded). Raise it with any change to classification (a topic, a schema) or to the typed rows:
 * the daemon then re-classifies the stored unparsed deliveries older than it by itself
 * (src/reparse), so what an earlier release could not read is reconciled after the upgrade.
 *
 * A change to the event key is not covered by that: the automatic reparse reads unparsed deliveries
 * only, so applied ones keep their claims under the older key, and a retry stored unparsed would be
 * applied again under the new key (two typed rows for one event; a test of it, simulating an older
 * key, did so). Such a change needs every delivery re-keyed (`ledger reparse --status all`) before
 * the new release ingests, or a claim check across key forms. No release has changed the key.
 *
 * 1: exact amounts as JSON numbers as well as strings (payloads.ts), hostile values named per field.
 * 2: event_time in year 0000 refused (event-time.ts: timestamptz has no year 0); numbers in a JSON
 *    list of external_reference_ids kept as their literal text (reference-list.ts). Both only change
 *    deliveries that parsed: the automatic reparse (unparsed ones only) re-reads the stored unparsed
 *    deliveries once and changes none of them. A delivery an older parser stored parsed with such a
 *    value keeps it until `ledger reparse --status all`, which removes the typed row this parser
 *    would not write (reparse/stale-typed-rows.ts) and writes its own.
 * 3: a payout's sepa_instruction_id and an invoice's external_reference_id may be null, as the
 *    spec marks neither "always" (a null was refused: no typed row, so a cancelled payout stayed
 *    complete to the rules). The automatic reparse re-reads the deliveries stored unparsed for it.
 */
export const PARSER_VERSION = 3;