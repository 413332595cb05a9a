import type { Config } from '../config/schema.js';
import { sepaKey } from '../ledger/sepa-key.js';
import type { Database } from '../db/database.js';
import { discrepancySource } from '../reports/discrepancies.js';
import { unstatedCurrency } from '../payout-reports/contract-terms.js';
import { decimalAmount, REPORT_TIME_FORMAT } from '../reports/source.js';
import type { Guard } from './operator-request.js';
import { sendJson, type Route } from './server.js';
import { SQL_ISO_MICROSECONDS } from '../db/time-format.js';
import { creditLines } from '../ledger/payout-credits.js';

const ISO_US = SQL_ISO_MICROSECONDS;
const LIMIT = 50;
const utf8 = new TextDecoder('utf-8', { fatal: false });

/**
 * Everything behind one finding, for a person to judge it: the report row and its evidence, the
 * history of status changes and notes, the webhook deliveries about the entity (with their raw
 * bodies, as received), the states the poller saw, and the bank lines with its SEPA reference (or
 * the line itself). Lists are capped at 50 (newest first) so a noisy entity cannot blow up a page.
 */
async function evidenceOf(database: Database, config: Config, id: number): Promise<Record<string, unknown> | undefined> {
  const { sql } = database;
  const env = config.PROVIDER_ENV;
  const [base] = await sql<{ entity_type: string; entity_id: string; sepa_reference: string | null; evidence: Record<string, unknown> | null }[]>`
    select entity_type::text, entity_id, sepa_reference, evidence from discrepancies where id = ${id} and environment = ${env}`;
  if (!base) return undefined;
  const source = discrepancySource(database, { environment: env, status: 'all', currency: unstatedCurrency(config.CONTRACT_TERMS) });
  const [row] = await source.query(String(id - 1), 1);
  if (row) source.map?.(row);
  const history = await sql`
    select to_char(at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as at, from_status::text, to_status::text, actor, reason
    from discrepancy_history where discrepancy_id = ${id} order by at, id`;
  const ev = base.evidence ?? {};
  const deliveryIds = [base.entity_type === 'webhook_delivery' ? base.entity_id : null, ev.first_delivery_id]
    .filter((v) => v !== null && v !== undefined && /^[0-9]{1,18}$/.test(String(v))).map(String);
  const entityFilter = base.entity_type === 'webhook_delivery' || base.entity_type === 'statement_line'
    ? sql`id::text in ${sql(deliveryIds.length > 0 ? deliveryIds : ['0'])}`
    : sql`entity_id = ${base.entity_id}`;
  const deliveryRows = await sql<{ raw_body: Buffer }[]>`
    select id, topic, to_char(received_at at time zone 'UTC', ${ISO_US}) as received_at, event_time, applied, parse_status::text,
           signature_valid, source_ip, raw_body
    from webhook_deliveries where environment = ${env} and ${entityFilter}
    order by received_at desc, id desc limit ${LIMIT}`;
  const deliveries = deliveryRows.map((d) => ({ ...d, raw_body: utf8.decode(d.raw_body) }));
  const polled = base.entity_type === 'order'
    ? await sql`
        select state, previous_state, to_char(observed_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as observed_at, poll_run_id
        from order_state_observations where environment = ${env} and order_uuid::text = ${base.entity_id}
        order by observed_at desc limit ${LIMIT}`
    : [];
  const snapshot = base.entity_type === 'order'
    ? (await sql`
        select state, external_reference_id, to_char(last_seen_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as last_seen_at,
               to_char(state_since at time zone 'UTC', ${REPORT_TIME_FORMAT}) as state_since
        from order_snapshots where environment = ${env} and order_uuid::text = ${base.entity_id}`)[0] ?? null
    : null;
  const lineId = typeof ev.statement_line_id === 'number' || /^[0-9]{1,18}$/.test(String(ev.statement_line_id ?? '')) ? Number(ev.statement_line_id) : 0;
  const reference = sepaKey(sql, sql`${base.sepa_reference ?? ''}::text`);
  const bankLines = await sql`
    select id, booking_date::text, amount_cents::text, ${decimalAmount(sql, sql`amount_cents`)} as amount, currency,
           direction::text, account_iban, counterparty_iban, counterparty_name, bank_reference, sepa_reference, remittance
    from statement_lines
    where environment = ${env}
      and (id = ${lineId} or (${reference} is not null and (sepa_reference = ${reference} or id in (
        -- The credits the payout rules matched: its reference wherever the bank wrote it, compared
        -- as the rules compare it (ledger/sepa-key.ts sepaKey).
        select c.id from (${creditLines(sql, env)}) c where c.payout_reference = ${reference}))))
    order by booking_date desc, id desc limit ${LIMIT}`;
  return { discrepancy: { ...row, evidence: base.evidence }, history, deliveries, polled_state: snapshot, polled, bank_lines: bankLines };
}

export function detailRoutes(deps: { config: Config; guarded: Guard }): Route[] {
  const { config, guarded } = deps;
  return [
    {
      method: 'GET',
      path: /^\/api\/discrepancies\/[0-9]{1,15}$/,
      handler: guarded({
        // The path's pattern admits 1 to 15 digits only: an exact id, nothing to refuse.
        parse: (url) => Number(url.pathname.split('/')[3]),
        handle: async (_req, res, id, _who, ledger) => {
          const found = await evidenceOf(ledger, config, id);
          if (!found) return sendJson(res, 404, { error: `no discrepancy ${id} in ${config.PROVIDER_ENV}` });
          sendJson(res, 200, found);
        },
      }),
    },
  ];
}
