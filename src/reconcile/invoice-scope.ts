import type { TransactionSql } from 'postgres';
import { topic } from '../provider/vocabulary.js';
import { SCOPE_MARGIN_SECONDS } from './scope.js';
import type { DiscrepancyKind, RuleParams } from './types.js';
import { invoiceSettings } from './rules/invoice-common.js';
import { INVOICE_RULE_KINDS, PAYOUT_RULE_KINDS } from './rules/registry.js';
import { payoutUnknownInvoice } from './rules/payout-unknown-invoice.js';
import { payoutSettings } from './rules/payout-common.js';

/**
 * The kinds whose evidence is the invoice evidence below and nothing else: the invoice rules
 * (rules/invoice-common.ts) and payout_unknown_invoice, which reads the same staged sets.
 */
export const INVOICE_EVIDENCE_KINDS: readonly DiscrepancyKind[] = [...INVOICE_RULE_KINDS, payoutUnknownInvoice.kind];

/**
 * What those rules judge with besides the ledger: the invoice and payout settings, as one string a
 * pass records (reconcile_runs.settings, settings.ts INVOICE_RULES_SETTING) and the next compares.
 */
export function invoiceRulesKey(p: RuleParams): string {
  const { payout, invoice } = p;
  return JSON.stringify({ payout: payout ?? null, invoice: invoice ?? null }, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
}

/**
 * The kinds about payouts and bank lines alone (registry.ts PAYOUT_RULE_KINDS, less
 * payout_unknown_invoice, which reads the invoice evidence): payout_not_on_statement,
 * statement_credit_without_payout, payout_amount_mismatch, payout_cancelled_but_credited. They read
 * the payouts' events, the statements' credit lines and periods, the payout settings, for
 * payout_not_on_statement alone the clock (a payout's settlement deadline), and for
 * payout_amount_mismatch alone the payout report rows (a report naming another currency than the
 * credit makes the amounts incomparable: rules/payout-amount-mismatch.ts). The others read no
 * report (rules/payout-*.ts, payout-common.ts, ledger/payout-credits.ts).
 */
export const PAYOUT_EVIDENCE_KINDS: readonly DiscrepancyKind[] = PAYOUT_RULE_KINDS.filter((kind) => !INVOICE_EVIDENCE_KINDS.includes(kind));

export interface InvoiceEvidence {
  /** false: nothing those kinds read has changed since the previous complete pass began */
  changed: boolean;
  /** why they are judged again (the first condition found), or why not */
  reason: string;
  /**
   * Of those kinds, the ones whose own evidence did not change although the others' did: their
   * findings stand (see invoiceEvidenceSince). Empty when `changed` is false (all stand) or when
   * every kind is judged.
   */
  standing: DiscrepancyKind[];
  /** The same for PAYOUT_EVIDENCE_KINDS, judged or standing together (see invoiceEvidenceSince). */
  payouts: { changed: boolean; reason: string };
}

/**
 * The kinds that read no invoice or factoring event except through a payout report row's Doc No
 * or its invoice's order, nor the clock, nor the statements: payout_deduction_mismatch (the rows,
 * their payouts' latest events, each row's invoice, creation and payment method by Doc No, the
 * order's first row, whose order comes from the invoice of a row's Doc No, and the order's other
 * invoices, whose creation or earlier payout decides whether the first row's fee is judged) and
 * payout_report_mismatch (the rows and their payouts' latest events only). While invoices arrive that no report names yet, the usual case (a report
 * follows the payout, days after the invoice), they are not judged again: at 1,000,000 orders
 * payout_deduction_mismatch was 7.9 s of the 20.7 s a pass after one new invoice event took
 * (bench/README.md, reconcile).
 */
const REPORT_ROW_KINDS: readonly DiscrepancyKind[] = ['payout_deduction_mismatch', 'payout_report_mismatch'];

/**
 * Whether an invoice event that arrived at or after W - M is of an invoice whose order (any of its
 * events naming one) is the order of an invoice a payout report row names as its Doc No.
 * payout_deduction_mismatch reads such an invoice through the order, not through a Doc No: a late
 * invoice/created of the order's first invoice, paid out earlier or not yet, decides whether a
 * row's fee is judged (rules/payout-deduction-mismatch.ts fee_unknown); left standing, the finding
 * stayed open where a full pass resolved it. The reported invoices' orders come from the invoice
 * facts the previous pass kept (reconcile_invoice_facts, invoice-common.ts): an invoice with an
 * event since W - M is found by report_reference itself. Neither table has an index by order, so
 * this is asked only when no other condition already judges those kinds: the few new events'
 * orders hashed against one scan of the facts.
 */
async function reportedOrderEvidence(tx: TransactionSql, env: RuleParams['environment'], since: string): Promise<boolean> {
  const lower = tx`${since}::timestamptz - make_interval(secs => ${SCOPE_MARGIN_SECONDS})`;
  const [row] = await tx<{ found: boolean }[]>`
    select exists (
      select 1
      from (select distinct a.order_uuid
            from invoice_events e
            join invoice_events a on a.environment = e.environment and a.invoice_uuid = e.invoice_uuid
            where e.environment = ${env} and e.received_at >= ${lower} and a.order_uuid is not null) o
      join reconcile_invoice_facts f on f.environment = ${env} and f.order_uuid = o.order_uuid
      join payout_report_rows r on r.environment = f.environment and r.doc_no = f.ref
    ) as found`;
  return row?.found ?? false;
}

/**
 * Whether an incremental pass must judge the invoice kinds again, and the payout kinds. Like the
 * order rules' scope (scope.ts), but whole: these rules look at every invoice and payout, and their
 * findings can only change when one of these does, W being the start of the previous complete pass,
 * M = SCOPE_MARGIN_SECONDS (rows whose transaction began before W and committed after it), G the
 * grace period and D = INVOICE_PAYOUT_DAYS:
 *  1. the settings they judge with (invoiceRulesKey) differ from those the previous pass recorded;
 *  2. an invoice or factoring event arrived at or after W - M;
 *  3. a payout event arrived at or after W - M - G: a new listing, or a payout crossing the grace
 *     period payout_unknown_invoice waits for (its first event G old);
 *  4. a payout report or a bank statement was stored at or after W - M (their `imported_at` is set
 *     as their transaction ends: a statement's import may run for longer than M);
 *  5. a deadline invoice_not_paid_out counts fell since W - M: a factoring/approved that arrived
 *     between W - M - D and now - D, or, in an environment with no factoring events (the deadline
 *     then counts from each invoice's creation), an invoice created between those instants.
 * The ledger never updates or deletes these rows; a reparse makes the pass full (scope.ts). When
 * none holds, their findings stand as the previous pass left them, which is what it would decide
 * again: at 1,000,000 orders with their invoices, judging them took 36 s of a pass with nothing
 * new (bench/README.md, reconcile). When only 2 (or 5) holds, the REPORT_ROW_KINDS' findings stand
 * too unless one of those invoice or factoring events names, or is of an invoice that names, a
 * reference some payout report row has as its Doc No, or one of those invoice events is of an
 * invoice of the order of an invoice some report row names (reportedOrderEvidence). Otherwise any
 * change judges every invoice again: there is no scope by invoice.
 *
 * The PAYOUT_EVIDENCE_KINDS likewise, as one group, with S = PAYOUT_SETTLEMENT_DAYS: judged when 1
 * holds (the payout settings are part of that key), a payout event arrived at or after W - M (none
 * of them waits for the grace period), a bank statement was stored at or after W - M (its credit
 * lines and periods come with it), a payout report was stored at or after W - M (4: its rows'
 * currency decides whether payout_amount_mismatch compares a payout with its credit, and a report
 * usually comes after the credit: left standing, a GBP report of a payout the bank booked in EUR
 * kept open the excess a full pass resolved, test/reconcile/incremental-payout-report.test.ts), or
 * a settlement deadline payout_not_on_statement counts fell since W - M: a payout event whose
 * anchor (event_time, else arrival: payout-common.ts latestPayouts) lies between W - M - S and
 * now - S. The group is judged or stands as a whole (pass.ts), so a report judges all four; reports
 * come about once per payout, as payout events do. Otherwise their findings stand: with the
 * payouts, statements and invoices of 1,000,000 orders (bench/reconcile, invoice-seed.ts) they
 * were 410 of the 522 ms a pass with nothing new took (bench/README.md, reconcile).
 */
export async function invoiceEvidenceSince(
  tx: TransactionSql,
  p: RuleParams,
  since: string,
  recordedKey: string | null,
): Promise<InvoiceEvidence> {
  if (recordedKey !== invoiceRulesKey(p)) {
    return {
      changed: true, reason: 'the previous pass judged the invoices with other settings', standing: [],
      payouts: { changed: true, reason: 'the previous pass judged the payouts with other settings' },
    };
  }
  const { payoutDays } = invoiceSettings(p);
  const { settlementDays } = payoutSettings(p);
  const env = p.environment;
  const lower = tx`${since}::timestamptz - make_interval(secs => ${SCOPE_MARGIN_SECONDS})`;
  const deadlineFrom = tx`${lower} - make_interval(days => ${payoutDays})`;
  const deadlineTo = tx`${p.now.toISOString()}::timestamptz - make_interval(days => ${payoutDays})`;
  // Each condition once, as a column: the reason names the first that holds, the REPORT_ROW_KINDS'
  // test reads three of them and the payout kinds' four.
  const [row] = await tx<{
    invoice_event: boolean; factoring_event: boolean; payout_event: boolean; report: boolean; statement: boolean; deadline: boolean; report_reference: boolean;
    payout_arrived: boolean; settlement_deadline: boolean;
  }[]>`
    select
      exists (select 1 from payout_events where environment = ${env} and received_at >= ${lower}) as payout_arrived,
      exists (select 1 from payout_events
              where environment = ${env}
                and coalesce(event_time_sortable::timestamptz, received_at)
                    between ${lower} - make_interval(days => ${settlementDays})
                        and ${p.now.toISOString()}::timestamptz - make_interval(days => ${settlementDays})) as settlement_deadline,
      exists (select 1 from invoice_events where environment = ${env} and received_at >= ${lower}) as invoice_event,
      exists (select 1 from factoring_events where environment = ${env} and received_at >= ${lower}) as factoring_event,
      exists (select 1 from payout_events where environment = ${env} and received_at >= ${lower} - make_interval(secs => ${p.graceSeconds})) as payout_event,
      exists (select 1 from payout_reports where environment = ${env} and imported_at >= ${lower}) as report,
      exists (select 1 from bank_statements where environment = ${env} and imported_at >= ${lower}) as statement,
      (exists (select 1 from factoring_events
               where environment = ${env} and topic = ${topic('factoring/approved')}
                 and received_at >= ${deadlineFrom} and received_at <= ${deadlineTo})
       or (not exists (select 1 from factoring_events where environment = ${env})
           and exists (select 1 from invoice_events
                       where environment = ${env}
                         and coalesce(event_time_sortable::timestamptz, received_at) >= ${deadlineFrom}
                         and coalesce(event_time_sortable::timestamptz, received_at) <= ${deadlineTo}))) as deadline,
      -- An invoice or factoring event (2) of a reference a report row names. An invoice's events
      -- may name more than one reference (its first names it): every reference of an invoice with
      -- a new event.
      (exists (select 1 from factoring_events f
               join payout_report_rows r on r.environment = f.environment and r.doc_no = f.invoice_external_reference_id
               where f.environment = ${env} and f.received_at >= ${lower})
       or exists (select 1 from invoice_events e
                  join invoice_events a on a.environment = e.environment and a.invoice_uuid = e.invoice_uuid
                  join payout_report_rows r on r.environment = a.environment and r.doc_no = a.external_reference_id
                  where e.environment = ${env} and e.received_at >= ${lower})) as report_reference`;
  const why = !row ? null
    : row.invoice_event ? 'an invoice event arrived'
    : row.factoring_event ? 'a factoring event arrived'
    : row.payout_event ? 'a payout event arrived or crossed the grace period'
    : row.report ? 'a payout report was imported'
    : row.statement ? 'a bank statement was imported'
    : row.deadline ? 'an invoice reached its payout deadline'
    : null;
  const payoutWhy = !row ? null
    : row.payout_arrived ? 'a payout event arrived'
    : row.statement ? 'a bank statement was imported'
    : row.report ? 'a payout report was imported'
    : row.settlement_deadline ? 'a payout reached its settlement deadline'
    : null;
  const payouts = payoutWhy ? { changed: true, reason: payoutWhy } : { changed: false, reason: `no payout evidence since ${since}` };
  if (!why) return { changed: false, reason: `no invoice evidence since ${since}`, standing: [], payouts };
  // What the REPORT_ROW_KINDS read changed: a payout event (3), a report (4), a report reference, or
  // an invoice of a reported invoice's order (asked only when nothing else decided it).
  const reportsRead = row!.payout_event || row!.report || row!.report_reference
    || (row!.invoice_event && await reportedOrderEvidence(tx, env, since));
  return { changed: true, reason: why, standing: reportsRead ? [] : [...REPORT_ROW_KINDS], payouts };
}
