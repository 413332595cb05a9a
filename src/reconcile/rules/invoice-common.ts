import type { PendingQuery, Row, TransactionSql } from 'postgres';
import { DEFAULT_INVOICE_PAYOUT_DAYS, type ProviderEnvironment } from '../../config/schema.js';
import type { InvoiceRuleSettings, RuleParams } from '../types.js';
import { latestPayouts } from './payout-common.js';
import { decisionFirst, invoiceFacts } from '../../ledger/invoices.js';
import { stage } from '../stage.js';
import { topic } from '../../provider/vocabulary.js';
import { refreshKeptSet, type KeptSet } from '../kept-set.js';
import { SCOPE_MARGIN_SECONDS } from '../scope.js';

/** INVOICE_PAYOUT_DAYS' default (config/schema.ts says why); no contract terms: deductions are not judged. */
export const DEFAULT_INVOICE_SETTINGS: InvoiceRuleSettings = { payoutDays: DEFAULT_INVOICE_PAYOUT_DAYS, terms: null };

export function invoiceSettings(p: RuleParams): InvoiceRuleSettings {
  return p.invoice ?? DEFAULT_INVOICE_SETTINGS;
}

/**
 * The evidence the invoice rules share, built once per pass that judges them: two staged as
 * analysed temporary tables dropped at commit (stage.ts), three kept between passes (KEPT_SETS).
 * The rules read these, not the ledger's tables, for five sets:
 *  - `pass_payouts`: each payout as its latest event says (payout-common.ts latestPayouts);
 *  - `pass_listings`: every invoice reference each payout lists (trimmed, blanks ignored, once per
 *    payout) with the payout's status, SEPA reference (`sepa_key` upper-case), amount and anchor;
 *  - `pass_invoices`: each invoice with its reference, order, creation, cancellation and gross
 *    amount (ledger/invoices.ts invoiceFacts, the one definition the invoices report also reads);
 *  - `pass_factoring`: each invoice reference's latest factoring event (a decision over a pending,
 *    then by arrival: factoring payloads carry no event_time), its topic, arrival and factored amount;
 *  - `pass_invoice_refs`: every reference any invoice event carries (payout_unknown_invoice).
 * The invoice rules look at every invoice whenever they run (no scope by invoice: their evidence
 * changes with time, a deadline days after factoring, and with payouts, which name invoices, not
 * orders); an incremental pass runs them only when some of that evidence is new (invoice-scope.ts).
 *
 * Why staged: built inside each rule, these sets were rebuilt three to four times a pass, and the
 * planner, estimating 10 completed payouts where 20,000 were (the `distinct on` of latestPayouts),
 * probed the invoices and factoring events one listing at a time. At 1,000,000 orders with their
 * invoices (bench/reconcile, invoice-seed.ts) that made the invoice rules 126 s of a 141 s pass
 * (bench/README.md, reconcile).
 */
/** Returns the kept tables the pass wrote, to be analysed once it committed (kept-set.ts). */
export async function stageInvoiceEvidence(tx: TransactionSql, p: RuleParams, since: string | undefined): Promise<string[]> {
  await stage(tx, 'pass_payouts', latestPayouts(tx, p));
  // Each payout's references made distinct within the payout (a few dozen each), not as one hash
  // of every listing's seven columns (1.7 s at 1,000,000 listings).
  await stage(tx, 'pass_listings', tx`
    select l.payout_uuid, l.status, l.sepa_instruction_id, l.sepa_key, l.amount_cents, l.anchor, r.ref
    from pass_payouts l
    cross join lateral (
      select distinct trim(x) as ref from unnest(l.external_reference_ids) as x where trim(x) <> ''
    ) r`);
  await tx`create index on pass_payouts (payout_uuid)`;
  await tx`create index on pass_listings (ref)`;
  // Temporary tables are never analysed by autovacuum: without this the planner guesses their sizes.
  await tx`analyze pass_payouts, pass_listings`;
  const lower = since === undefined ? undefined : tx`${since}::timestamptz - make_interval(secs => ${SCOPE_MARGIN_SECONDS})`;
  const written: string[] = [];
  for (const set of KEPT_SETS) if (await refreshKeptSet(tx, p.environment, set, lower)) written.push(set.table);
  return written;
}

/**
 * The three sets a pass keeps between passes (kept-set.ts), each a function of its own key's
 * evidence alone, which the ledger only ever adds (a reparse makes the pass full: scope.ts). So
 * after the previous complete pass (begun at W), only the keys with evidence received at or after
 * W - M (M = SCOPE_MARGIN_SECONDS, for transactions that began before W and committed after it, as
 * in scope.ts) can have other rows, and an incremental pass recomputes those alone. A pass that does
 * not judge the invoices leaves them as they are: it found no invoice or factoring event since
 * W - M (invoice-scope.ts). Staged whole in each pass that judged the invoices, they were most of
 * it: at 1,000,000 invoices, 3,000,000 invoice events and 1,000,000 factoring events, 12-15 s of
 * `invoice_evidence` (bench/README.md, reconcile).
 */
const KEPT_SETS: readonly KeptSet[] = [
  {
    // Each invoice: reference, order, creation, cancellation, gross amount (ledger/invoices.ts). The
    // reference in the "C" collation, as invoiceFacts computes it. No index on the staged table:
    // every rule reads it whole or by its few canceled rows (0.7 s at 1,000,000 invoices, unused).
    name: 'pass_invoices',
    table: 'reconcile_invoice_facts',
    key: ['invoice_uuid'],
    values: ['ref', 'order_uuid', 'created_at', 'canceled_at', 'gross_amount_cents'],
    viewColumns: 'invoice_uuid, ref collate "C" as ref, order_uuid, created_at, canceled_at, gross_amount_cents',
    indexStaged: false,
    rows: (tx, environment) => invoiceFacts(tx, environment),
    rowsSince: (tx, environment, lower) => invoiceFacts(tx, environment, { arrivedSince: lower }),
    evidence: invoiceReferenceEvidence,
  },
  {
    // Each invoice reference's latest factoring event by arrival (factoring payloads carry no
    // event_time). Sorted in the "C" collation, which only decides the order of the groups, not
    // which event each keeps (equality is bytewise in both): 1,000,000 events 0.84 s against 1.37 s.
    name: 'pass_factoring',
    table: 'reconcile_factoring_latest',
    key: ['ref'],
    values: ['topic', 'received_at', 'invoice_amount_cents'],
    indexStaged: true,
    rows: (tx, environment) => latestFactoring(tx, environment, tx``),
    rowsSince: (tx, environment, lower) => latestFactoring(tx, environment, tx`
      and invoice_external_reference_id in (
        select invoice_external_reference_id from factoring_events where environment = ${environment} and received_at >= ${lower})`),
    evidence: (tx, environment) => tx`exists (select 1 from factoring_events where environment = ${environment} and invoice_external_reference_id is not null)`,
  },
  {
    // Every reference any invoice event carries (payout_unknown_invoice).
    name: 'pass_invoice_refs',
    table: 'reconcile_invoice_refs',
    key: ['ref'],
    values: [],
    indexStaged: true,
    rows: (tx, environment) => invoiceReferences(tx, environment, tx``),
    rowsSince: (tx, environment, lower) => invoiceReferences(tx, environment, tx`and received_at >= ${lower}`),
    evidence: invoiceReferenceEvidence,
  },
];

/** Whether any invoice event carries a reference: evidence of the invoice facts and of the references alike. */
function invoiceReferenceEvidence(tx: TransactionSql, environment: ProviderEnvironment) {
  return tx`exists (select 1 from invoice_events where environment = ${environment} and external_reference_id is not null)`;
}

function invoiceReferences(tx: TransactionSql, environment: ProviderEnvironment, only: PendingQuery<Row[]>) {
  return tx`
    select distinct external_reference_id as ref from invoice_events
    where environment = ${environment} and external_reference_id is not null ${only}`;
}


/**
 * Invoices known only from their factoring: the references whose latest factoring event
 * (pass_factoring) is factoring/approved and that no invoice event carries (their invoice/created
 * was lost, or is still to come), with the invoice uuid the approval names (provider-api.md:
 * factoring/approved adds invoice_uuid), null where no approval names one. The provider owes the
 * merchant for them as for any approved invoice (CONTRACT.md, invoice_not_paid_out: "an invoice
 * factored (or created)"), and no invoice/canceled of theirs is in the ledger either.
 */
export function factoredWithoutInvoiceEvent(tx: TransactionSql, environment: ProviderEnvironment): PendingQuery<Row[]> {
  return tx`
    select (select e.invoice_uuid from factoring_events e
            where e.environment = ${environment} and e.invoice_external_reference_id = f.ref
              and e.topic = ${topic('factoring/approved')} and e.invoice_uuid is not null
            order by e.received_at desc, e.event_key desc limit 1) as invoice_uuid,
           f.ref, f.invoice_amount_cents, f.received_at
    from pass_factoring f
    where f.topic = ${topic('factoring/approved')}
      and not exists (select 1 from pass_invoices i where i.ref = f.ref)`;
}

function latestFactoring(tx: TransactionSql, environment: ProviderEnvironment, only: PendingQuery<Row[]>) {
  return tx`
    select distinct on (invoice_external_reference_id collate "C") invoice_external_reference_id as ref, topic, received_at, invoice_amount_cents
    from factoring_events
    where environment = ${environment} and invoice_external_reference_id is not null ${only}
    order by invoice_external_reference_id collate "C", ${decisionFirst(tx)}, received_at desc, event_key desc`;
}
