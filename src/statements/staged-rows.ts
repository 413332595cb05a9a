import { entryKey, entryReference, positionKey, statementKeyPrefix } from './line-key.js';
import type { StatementLine, StatementSection } from './types.js';

/**
 * The rows a statement is staged as, built in JavaScript and sent as one JSON document per table
 * (overlap.ts reads them with json_to_recordset): its entries, with what the overlap rule asks of
 * them, and its lines. Pure. The entries are what overlap.ts's SQL grouping of staged lines yields
 * (`collectEntries`, kept for statements handed over in parts): a reader writes an entry's lines one
 * after the other, and they share its account, date, currency, direction and reference (camt053.ts
 * splits a batch only into transactions of the entry's currency and direction; the other readers
 * write one line per entry), so the entry takes its first line's values and the sum of their amounts.
 */
export interface StagedEntry {
  entry_key: string;
  entry_index: number;
  account_iban: string | null;
  booking_date: string;
  currency: string;
  direction: string;
  /** decimal text: a JSON number would lose cents past 2^53 */
  amount_cents: string;
  entry_reference: string | null;
  /** the entry reference when no other entry of the statement has it with the same values (rule 2 of overlap.ts) */
  usable_reference: string | null;
  whole_day: boolean;
  lines: number;
}

export interface StagedLine {
  n: number;
  position_key: string;
  entry_key: string;
  entry_index: number;
  tx_index: number;
  account_iban: string | null;
  booking_date: string;
  value_date: string | null;
  amount_cents: string;
  currency: string;
  direction: string;
  counterparty_iban: string | null;
  counterparty_name: string | null;
  end_to_end_id: string | null;
  bank_reference: string | null;
  remittance: string | null;
  sepa_reference: string | null;
}

// 'NONREF' (any case) is the bank saying there is no reference. Only ASCII letters upper-case to
// these six, so an ASCII case-insensitive test is Postgres's upper(ref) = 'NONREF'.
const NONREF = /^nonref$/i;

/** A statement's entries and lines as staged rows; `from` numbers its lines after those before it in the file. */
export function stagedRows(
  section: StatementSection,
  days: { first: string | null; last: string | null },
  lines: readonly StatementLine[],
  from: number,
): { entries: StagedEntry[]; lines: StagedLine[] } {
  const entries: StagedEntry[] = [];
  const staged: StagedLine[] = new Array(lines.length);
  const byIndex = new Map<number, { entry: StagedEntry; cents: bigint }>();
  const wholeDay = (date: string) => days.first !== null && days.last !== null && date >= days.first && date <= days.last;
  const prefix = statementKeyPrefix(section);
  for (let i = 0; i < lines.length; i += 1) {
    const l = lines[i]!;
    let open = byIndex.get(l.entryIndex);
    if (!open) {
      const reference = entryReference(l);
      open = {
        entry: {
          entry_key: entryKey(prefix, l), entry_index: l.entryIndex, account_iban: l.accountIban, booking_date: l.bookingDate, currency: l.currency,
          direction: l.direction, amount_cents: '', entry_reference: reference !== null && !NONREF.test(reference) ? reference : null,
          usable_reference: null, whole_day: true, lines: 0,
        },
        cents: 0n,
      };
      byIndex.set(l.entryIndex, open);
      entries.push(open.entry);
    }
    const e = open.entry;
    open.cents += l.amountCents;
    e.lines += 1;
    e.whole_day &&= wholeDay(l.bookingDate);
    staged[i] = {
      n: from + i, position_key: positionKey(prefix, l), entry_key: e.entry_key, entry_index: l.entryIndex, tx_index: l.txIndex, account_iban: l.accountIban,
      booking_date: l.bookingDate, value_date: l.valueDate, amount_cents: l.amountCents.toString(), currency: l.currency, direction: l.direction,
      counterparty_iban: l.counterpartyIban, counterparty_name: l.counterpartyName, end_to_end_id: l.endToEndId, bank_reference: l.bankReference,
      remittance: l.remittance, sepa_reference: l.sepaReference,
    };
  }
  for (const { entry, cents } of byIndex.values()) entry.amount_cents = cents.toString();
  // Rule 2 trusts a reference only when it names one entry of these values in the statement.
  const sharing = new Map<string, number>();
  const valuesOf = (e: StagedEntry) => JSON.stringify([e.account_iban, e.booking_date, e.currency, e.direction, e.amount_cents, e.entry_reference]);
  for (const e of entries) if (e.entry_reference !== null) sharing.set(valuesOf(e), (sharing.get(valuesOf(e)) ?? 0) + 1);
  for (const e of entries) if (e.entry_reference !== null && sharing.get(valuesOf(e)) === 1) e.usable_reference = e.entry_reference;
  return { entries, lines: staged };
}
