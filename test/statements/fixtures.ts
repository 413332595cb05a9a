import { createHash, randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database.js';
import { silentLogger } from '../../src/log/logger.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import type { PassSummary } from '../../src/reconcile/types.js';
import { importStatement, type ImportResult } from '../../src/statements/import.js';
import { parseEventTime } from '../../src/webhooks/event-time.js';
import { testMetrics } from '../helpers/metrics.js';

export const PROVIDER_IBAN = 'DE02120300000000202051';
export const MERCHANT_IBAN = 'DE44500105175407324931';
export const OTHER_IBAN = 'DE89370400440532013000';

export function pass(database: Database, now: Date, settings: { days?: number; ibans?: string[]; pattern?: string; accounts?: string[]; full?: boolean } = {}): Promise<PassSummary> {
  return runReconcilePass(
    {
      config: {
        PROVIDER_ENV: 'sandbox', WEBHOOK_GRACE_SECONDS: 3600, PAYOUT_SETTLEMENT_DAYS: settings.days ?? 3,
        PAYOUT_SOURCE_IBANS: settings.ibans ?? [PROVIDER_IBAN], PAYOUT_ACCOUNT_IBANS: settings.accounts ?? [], ...(settings.pattern ? { PAYOUT_REFERENCE_PATTERN: settings.pattern } : {}),
      },
      log: silentLogger(),
      database,
      ...testMetrics(database),
    },
    now,
    { full: settings.full ?? false },
  );
}

/** One applied payout event as the receiver writes its typed row. */
export async function payoutEvent(
  database: Database,
  p: { uuid?: string; status?: 'complete' | 'cancelled'; sepa: string; cents: bigint; invoices?: string[]; eventTime: string; receivedAt?: string },
): Promise<string> {
  const uuid = p.uuid ?? randomUUID();
  const status = p.status ?? 'complete';
  const et = parseEventTime(p.eventTime)!;
  const key = createHash('sha256').update(`payout/${status}\n${uuid}\n${et.sortable}`).digest('hex');
  await database.sql`
    insert into payout_events (environment, event_key, topic, received_at, payout_uuid, status, sepa_instruction_id, amount_cents,
                               external_reference_ids, event_time, event_time_sortable)
    values ('sandbox', ${key}, ${`payout/${status}`}, ${p.receivedAt ?? p.eventTime}::timestamptz, ${uuid}, ${status}, ${p.sepa},
            ${p.cents.toString()}::bigint, ${p.invoices ?? []}::text[], ${p.eventTime}, ${et.sortable})`;
  return uuid;
}

export async function invoiceEvent(database: Database, reference: string, receivedAt: string): Promise<void> {
  const uuid = randomUUID();
  await database.sql`
    insert into invoice_events (environment, event_key, topic, received_at, invoice_uuid, external_reference_id)
    values ('sandbox', ${createHash('sha256').update(uuid).digest('hex')}, 'invoice/created', ${receivedAt}::timestamptz, ${uuid}, ${reference})`;
}

export interface Line {
  ref: string;
  date: string;
  cents: bigint;
  sepa: string;
  iban?: string;
}

/** A CSV statement in the simulator's columns; period = its first to last booking day. */
export function csvStatement(lines: Line[]): string {
  const head = 'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban';
  const rows = lines.map((l) => {
    const abs = l.cents < 0n ? -l.cents : l.cents;
    const amount = `${l.cents < 0n ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
    return [l.ref, l.date, l.date, amount, 'EUR', l.cents < 0n ? 'DBIT' : 'CRDT', 'Party', l.iban ?? PROVIDER_IBAN, l.sepa, `Auszahlung ${l.sepa}`, MERCHANT_IBAN].join(',');
  });
  return `${[head, ...rows].join('\r\n')}\r\n`;
}

/**
 * One MT940 statement of account NL81ASNB0708271234 booked on 2025-03-02, opening at 1,000.00 and
 * closing at `closingCents` (opening + credits - debits when it balances).
 */
export function mt940Statement(number: string, entries: { dc: 'C' | 'D'; cents: bigint; ref: string }[], closingCents: bigint): Buffer {
  const amount = (cents: bigint) => `${cents / 100n},${String(cents % 100n).padStart(2, '0')}`;
  return Buffer.from([
    ':20:UPLOAD', ':25:NL81ASNB0708271234', `:28C:${number}`, ':60F:C250301EUR1000,00',
    ...entries.flatMap((e) => [`:61:2503020302${e.dc}${amount(e.cents)}NTRFNONREF//${e.ref}`, `:86:/EREF/${e.ref}/REMI/Upload test/`]),
    `:62F:C250302EUR${amount(closingCents)}`, '-',
  ].join('\r\n'));
}

export function importCsv(database: Database, lines: Line[], name = 'test.csv'): Promise<ImportResult> {
  return importStatement(database, 'sandbox', Buffer.from(csvStatement(lines)), name);
}

export async function findings(database: Database, kind: string) {
  return database.sql<{ entity_id: string; subject: string; status: string; expected: string | null; observed: string | null; sepa_reference: string | null }[]>`
    select entity_id, subject, status::text, expected, observed, sepa_reference from discrepancies
    where kind = ${kind} order by entity_id, subject`;
}
