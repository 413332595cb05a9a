import type { TransactionSql } from 'postgres';
import { DEFAULT_INVOICE_PAYOUT_DAYS, environmentSchema } from '../../config/schema.js';
import type { InvoiceRuleSettings, RuleParams } from '../types.js';
import { latestPayouts } from './payout-common.js';
import { invoiceFacts } from '../../ledger/invoices.js';
import { stage } from '../stage.js';
import { SCOPE_MARGIN_SECONDS } from '../scope.js';

/** INVOICE_PAYOUT_DAYS' default (config/schema.ts says why); no contract terms: deductions are not judged. */
export const DEFAULT_INVOICE_SETTINGS: InvoiceRuleSettings = { payoutDays: DEFAULT_INVOICE_PAYOUT_DAYS, terms: null };

export function invoiceSettings(p: RuleParams): InvoiceRuleSettings {
  return p.invoice ?? DEFAULT_INVOICE_SETTINGS;
}

/**
 * The evidence the invoice rules share, staged once per pass as analysed temporary tables dropped
 * at commit (stage.ts). The rules read these tables, not the ledger's, for five sets:
 *  - `pass_payouts`: each payout as its latest event says (payout-common.ts latestPayouts);
 *  - `pass_listings`: every invoice reference each payout lists (trimmed, blanks ignored, once per
 *    payout) with the payout's status, SEPA reference (`sepa_key` upper-case), amount and anchor;
 *  - `pass_invoices`: each invoice with its reference, order, creation, cancellation and gross
 *    amount (ledger/invoices.ts invoiceFacts, the one definition the invoices report also reads),
 *    a view of the table `reconcile_invoice_facts`, which the passes keep (refreshInvoiceFacts);
 *  - `pass_factoring`: each invoice reference's latest factoring event (by arrival: factoring
 *    payloads carry no event_time), its topic, arrival and factored amount;
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
export async function stageInvoiceEvidence(tx: TransactionSql, p: RuleParams, since: string | undefined): Promise<void> {
  await stage(tx, 'pass_payouts', latestPayouts(tx, p));
  // Each payout's references made distinct within the payout (a few dozen each), not as one hash
  // of every listing's seven columns (1.7 s at 1,000,000 listings).
  await stage(tx, 'pass_listings', tx`
    select l.payout_uuid, l.status, l.sepa_instruction_id, l.sepa_key, l.amount_cents, l.anchor, r.ref
    from pass_payouts l
    cross join lateral (
      select distinct trim(x) as ref from unnest(l.external_reference_ids) as x where trim(x) <> ''
    ) r`);
  await refreshInvoiceFacts(tx, p, since);
  // Sorted in the "C" collation, which only decides the order of the groups, not which event each
  // keeps (equality is bytewise in both): 1,000,000 events 0.84 s against 1.37 s in the database's.
  await stage(tx, 'pass_factoring', tx`
    select distinct on (invoice_external_reference_id collate "C") invoice_external_reference_id as ref, topic, received_at, invoice_amount_cents
    from factoring_events
    where environment = ${p.environment} and invoice_external_reference_id is not null
    order by invoice_external_reference_id collate "C", received_at desc, event_key desc`);
  await stage(tx, 'pass_invoice_refs', tx`
    select distinct external_reference_id as ref from invoice_events
    where environment = ${p.environment} and external_reference_id is not null`);
  // No index on pass_invoices: every rule reads it whole or by its few canceled rows, and building
  // one took 0.7 s at 1,000,000 invoices that no plan used (auto_explain of a full pass).
  await tx`create index on pass_payouts (payout_uuid)`;
  await tx`create index on pass_listings (ref)`;
  await tx`create unique index on pass_factoring (ref)`;
  await tx`create unique index on pass_invoice_refs (ref)`;
  // Temporary tables are never analysed by autovacuum: without this the planner guesses their sizes.
  await tx`analyze pass_payouts, pass_listings, pass_factoring, pass_invoice_refs`;
}

/**
 * Brings `reconcile_invoice_facts` up to date and `pass_invoices` with it. An invoice's facts are a
 * function of its own invoice events alone, which the ledger only ever adds: so after the previous
 * complete pass (begun at W), only the invoices with an event received at or after W - M (M =
 * SCOPE_MARGIN_SECONDS, for transactions that began before W and committed after it, as in
 * scope.ts) can have other facts. An incremental pass recomputes those invoices, each from all its
 * events, and reads the table through a view. A full pass (no W: the first, a requested one, after
 * a reparse, another release's or settings' pass, at least daily), and any pass that finds the table
 * empty while invoice events exist, computes every invoice as a staged table, as the rules read it,
 * and writes only where the kept table differs. A pass that does not judge the invoices leaves it
 * as it is: it found no invoice event since W - M, so none of its invoices changed. Recomputing
 * every invoice in each pass that judges them was most of such a pass: at 1,000,000 invoices and
 * 3,000,000 invoice events 12-15 s of its staging (bench/README.md, reconcile).
 */
async function refreshInvoiceFacts(tx: TransactionSql, p: RuleParams, since: string | undefined): Promise<void> {
  const [state] = await tx<{ kept: boolean; events: boolean }[]>`
    select exists (select 1 from reconcile_invoice_facts where environment = ${p.environment}) as kept,
           exists (select 1 from invoice_events where environment = ${p.environment}) as events`;
  // A view an earlier pass on this connection left (a temporary view outlives its transaction).
  await tx`drop view if exists pass_invoices`;
  if (since === undefined || (state!.events && !state!.kept)) {
    await stage(tx, 'pass_invoices', invoiceFacts(tx, p.environment));
    await tx`analyze pass_invoices`;
    // What differs, in one join: rewriting 1,000,000 unchanged rows took a full pass 8-10 s more.
    await stage(tx, 'invoice_facts_changed', tx`
      select f.invoice_uuid, f.ref, f.order_uuid, f.created_at, f.canceled_at, f.gross_amount_cents, k.invoice_uuid as kept_uuid
      from pass_invoices f
      full join (select * from reconcile_invoice_facts where environment = ${p.environment}) k on k.invoice_uuid = f.invoice_uuid
      where f.invoice_uuid is null or k.invoice_uuid is null
         or (k.ref, k.order_uuid, k.created_at, k.canceled_at, k.gross_amount_cents)
            is distinct from (f.ref, f.order_uuid, f.created_at, f.canceled_at, f.gross_amount_cents)`);
    const removed = await tx`
      delete from reconcile_invoice_facts
      where environment = ${p.environment} and invoice_uuid in (select kept_uuid from invoice_facts_changed where invoice_uuid is null)`;
    const written = await tx`
      insert into reconcile_invoice_facts as k (environment, invoice_uuid, ref, order_uuid, created_at, canceled_at, gross_amount_cents)
      select ${p.environment}, invoice_uuid, ref, order_uuid, created_at, canceled_at, gross_amount_cents
      from invoice_facts_changed where invoice_uuid is not null
      ${upsertFacts(tx)}`;
    // For the incremental passes' plans; a pass over a table already current writes nothing.
    if (removed.count + written.count > 0) await tx`analyze reconcile_invoice_facts`;
    return;
  }
  await tx`
    insert into reconcile_invoice_facts as k (environment, invoice_uuid, ref, order_uuid, created_at, canceled_at, gross_amount_cents)
    select ${p.environment}, f.invoice_uuid, f.ref, f.order_uuid, f.created_at, f.canceled_at, f.gross_amount_cents
    from (${invoiceFacts(tx, p.environment, { arrivedSince: tx`${since}::timestamptz - make_interval(secs => ${SCOPE_MARGIN_SECONDS})` })}) f
    ${upsertFacts(tx)}`;
  // The reference in the "C" collation, as invoiceFacts computes it. A view takes no parameters:
  // the environment is one of the enum's values (config/schema.ts), written as a literal.
  if (!environmentSchema.options.includes(p.environment)) throw new Error(`not an environment: ${String(p.environment)}`);
  await tx.unsafe(`
    create temporary view pass_invoices as
    select invoice_uuid, ref collate "C" as ref, order_uuid, created_at, canceled_at, gross_amount_cents
    from reconcile_invoice_facts where environment = '${p.environment}'`);
}

/** An invoice's facts replace the kept ones where they differ. */
function upsertFacts(tx: TransactionSql) {
  return tx`
    on conflict (environment, invoice_uuid) do update
      set ref = excluded.ref, order_uuid = excluded.order_uuid, created_at = excluded.created_at,
          canceled_at = excluded.canceled_at, gross_amount_cents = excluded.gross_amount_cents
      where (k.ref, k.order_uuid, k.created_at, k.canceled_at, k.gross_amount_cents)
            is distinct from (excluded.ref, excluded.order_uuid, excluded.created_at, excluded.canceled_at, excluded.gross_amount_cents)`;
}
