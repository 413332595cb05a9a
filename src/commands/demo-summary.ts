import { sepaKey } from '../ledger/sepa-key.js';
import type { Counter } from 'prom-client';
import type { Database } from '../db/database.js';
import { BANK_OFFSET_HOURS } from '../reconcile/rules/payout-common.js';
import type { AttemptRecord, ExpectedDiscrepancy, GroundTruth, Simulator } from '../../sim/index.js';

/** Kinds whose evidence needs days of real time: a demo cannot show them (README, "Not done"). */
const NEEDS_REAL_DAYS = new Map([
  ['payout_not_on_statement', 'PAYOUT_SETTLEMENT_DAYS'],
  // The rule dates an invoice's debt by the factoring webhook's arrival, and the setting is whole days.
  ['invoice_not_paid_out', 'INVOICE_PAYOUT_DAYS'],
]);

/** The line for a kind the demo cannot show, or undefined when the difference is not that. */
function needsRealDays(t: KindTally): string | undefined {
  const setting = NEEDS_REAL_DAYS.get(t.kind);
  if (setting === undefined || t.found >= t.injected) return undefined;
  return `  difference: ${t.kind} ${t.injected - t.found} not found: it needs ${setting} of real time, longer than a demo`;
}

export interface KindTally {
  kind: string;
  injected: number;
  found: number;
}

/**
 * Injected faults per kind, from the simulator's ground truth, against what the ledger found for
 * the sandbox (every status: a retry is recorded already resolved). missed_webhook counts orders,
 * as the ground truth does: one order may carry a finding per state the poller saw.
 */
export function tallyInjected(truth: GroundTruth): Map<string, number> {
  const injected = new Map<string, number>();
  const seen = new Set<string>();
  for (const d of truth.discrepancies) {
    if (d.environment !== 'sandbox') continue;
    const key = d.kind === 'missed_webhook' ? `${d.kind}|${d.entity_id}` : `${d.kind}|${d.entity_id}|${d.subject}|${d.delivery_number ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    injected.set(d.kind, (injected.get(d.kind) ?? 0) + 1);
  }
  return injected;
}

export async function tallyFound(database: Database): Promise<Map<string, number>> {
  const rows = await database.sql<{ kind: string; n: number }[]>`
    select kind::text as kind,
           case when kind = 'missed_webhook' then count(distinct entity_id) else count(*) end::int as n
    from discrepancies where environment = 'sandbox' group by kind`;
  return new Map(rows.map((r) => [r.kind, r.n]));
}

export function compareTallies(injected: Map<string, number>, found: Map<string, number>): KindTally[] {
  const kinds = [...new Set([...injected.keys(), ...found.keys()])].sort();
  return kinds.map((kind) => ({ kind, injected: injected.get(kind) ?? 0, found: found.get(kind) ?? 0 }));
}

/** One line of found/injected per kind, then a line for each kind where they differ, saying why it may. */
/** `dataDir`: the demo's RECON_DATA_DIR, named in the advice so the command works after the demo ended too. */
export function describeTallies(tallies: KindTally[], graceSeconds: number, dataDir?: string): string[] {
  const report = `${dataDir === undefined ? '' : `RECON_DATA_DIR=${dataDir} `}npx bnpl-recon report discrepancies`;
  if (tallies.length === 0) return ['  found/injected: nothing injected yet'];
  const lines = [`  found/injected: ${tallies.map((t) => `${t.kind} ${t.found}/${t.injected}`).join(', ')}`];
  for (const t of tallies) {
    if (t.found === t.injected) continue;
    const days = needsRealDays(t);
    if (days !== undefined) {
      lines.push(days);
    } else if (t.found < t.injected) {
      lines.push(`  difference: ${t.kind} ${t.injected - t.found} injected, not found yet (a finding waits the ${graceSeconds} s grace period and the next pass)`);
    } else {
      lines.push(`  difference: ${t.kind} ${t.found - t.injected} found beyond those injected: check with ${report} --status all --kind ${t.kind} (a late or reordered delivery is flagged while it is late and resolved when it arrives)`);
    }
  }
  return lines;
}

/** A finding as the ledger holds it, for matching against the ground truth. */
export interface FoundFinding {
  kind: string;
  entity_type: string;
  entity_id: string;
  status: string;
  /** the ledger's subject ('' when the kind has none) */
  subject?: string;
  /** duplicate_delivery (whose entity is the delivery row): the event key and the entity the delivery named */
  event_key?: string | null;
  delivered_entity_id?: string | null;
  /**
   * statement_credit_without_payout: the payouts whose events carry the credit's SEPA reference,
   * when none of those events was stored more than a minute before the finding was first detected
   * (a batch's received_at is when its transaction began; a stalled commit lands later); else null
   */
  late_payouts?: string[] | null;
}

const NAMED_PER_KIND = 5;
const UNEXPLAINED = 'unexplained by the ground truth (a defect: please report it with the seed)';

/**
 * The matching key of an injected finding, as sim/README.md says: (kind, entity_type, entity_id),
 * plus the subject where one entity can hold several (the state of an order's duplicate_event, the
 * SEPA reference of a payout's, the unknown reference of a payout_unknown_invoice, the payout of a
 * payout_deduction_mismatch or payout_pays_canceled_invoice). missed_webhook is keyed by order only:
 * the ground truth names the state the API shows, the ledger also an earlier state the poller saw
 * whose webhook never came. A duplicate_delivery by its event and the copy's number (2, 3, ...).
 */
function truthKey(d: ExpectedDiscrepancy): string {
  switch (d.kind) {
    case 'missed_webhook':
      return `order ${d.entity_id}`;
    case 'duplicate_delivery':
      return `delivery of ${d.entity_id}, event ${(d.event_key ?? d.subject).slice(0, 12)}, copy ${d.delivery_number ?? 2}`;
    case 'duplicate_event':
    case 'payout_unknown_invoice':
    case 'payout_deduction_mismatch':
      return `${d.entity_type} ${d.entity_id} (${d.subject})`;
    case 'payout_pays_canceled_invoice':
      return `${d.entity_type} ${d.entity_id} (${d.related_entity_id ?? d.subject})`;
    default:
      return `${d.entity_type} ${d.entity_id}`;
  }
}

/** The same key for the ledger's findings of one kind; duplicate deliveries numbered per event in row order. */
function foundKeys(kind: string, found: readonly FoundFinding[]): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  const add = (key: string, status: string) => keys.set(key, [...(keys.get(key) ?? []), status]);
  const ofKind = found.filter((f) => f.kind === kind);
  if (kind === 'duplicate_delivery') {
    const byEvent = new Map<string, FoundFinding[]>();
    for (const f of ofKind) {
      const event = `delivery of ${f.delivered_entity_id ?? '?'}, event ${(f.event_key ?? `unknown row ${f.entity_id}`).slice(0, 12)}`;
      byEvent.set(event, [...(byEvent.get(event) ?? []), f]);
    }
    for (const [event, group] of byEvent) {
      group.sort((a, b) => Number(a.entity_id) - Number(b.entity_id));
      group.forEach((f, i) => add(`${event}, copy ${i + 2}`, f.status));
    }
    return keys;
  }
  for (const f of ofKind) {
    if (kind === 'missed_webhook') {
      if (f.entity_type === 'order') add(`order ${f.entity_id}`, f.status);
      else add(`${f.entity_type} ${f.entity_id}`, f.status);
    } else if (['duplicate_event', 'payout_unknown_invoice', 'payout_deduction_mismatch', 'payout_pays_canceled_invoice'].includes(kind)) {
      add(`${f.entity_type} ${f.entity_id} (${f.subject ?? ''})`, f.status);
    } else add(`${f.entity_type} ${f.entity_id}`, f.status);
  }
  return keys;
}

/** What the ledger's statements cover, against which a short payout credit is judged (payout-common.ts payoutWindows). */
export interface SettlementCover {
  /** PAYOUT_SETTLEMENT_DAYS */
  days: number;
  /** the latest end of the environment's imported statement periods; undefined: none imported */
  statementsEnd: Date | undefined;
  /**
   * Bank references of buyer credits whose buyer payment a payout report deducted before any pass
   * began after their statement's import (buyerCreditsDeductedUnseen): no pass saw them undeducted.
   */
  deductedUnseen?: ReadonlySet<string>;
}

/**
 * payout_amount_mismatch calls a short credit short only once the payout accounts' statements
 * cover [payout, payout + PAYOUT_SETTLEMENT_DAYS], with BANK_OFFSET_HOURS to spare (a period is the
 * bank's days, its zone unknown). The demo's statement is one period from the business's start, so
 * it covers the window exactly when it ends that long after the deadline: a short payout of the
 * run's last days is not judged yet. (The ledger's anchor is the payout's event time,
 * which adds microseconds to the ground truth's millisecond: a deadline the statement's end passes
 * by less than a millisecond counts as covered, so such a case stays unexplained.)
 */
function shortCreditNotYetJudged(d: ExpectedDiscrepancy, cover: SettlementCover): boolean {
  if (d.kind !== 'payout_amount_mismatch' || d.payout_time === undefined) return false;
  if (cover.statementsEnd === undefined) return true;
  return cover.statementsEnd.getTime() - BANK_OFFSET_HOURS * 3_600_000 < Date.parse(d.payout_time) + cover.days * 86_400_000;
}

/**
 * After the demo settled (no injection, retries and held-back deliveries done, a grace period, a
 * last poll and pass), names, for every kind, each finding the ledger and the simulator's ground
 * truth do not share, matched on (kind, entity_type, entity_id[, subject]) as sim/README.md says:
 * equal counts can hide a finding on the wrong entity. Each is named with what the ground truth
 * says happened to it: a delivery held back past the grace period (timing_dependent: flagged only
 * if a pass ran while it was late), one delivered out of order (a benign reordering, flagged while
 * its successor was there and it was not), a retry of an attempt that timed out or was answered 5xx
 * (an uncertain delivery: the receiver's commit may still have landed), a credit a pass saw before
 * its payout's webhook was stored (resolved when it came, by the ledger's own times), a kind that
 * needs days of real time. What the ground truth does not explain is said to be unexplained, not
 * guessed at.
 */
export function nameDifferences(truth: GroundTruth, found: readonly FoundFinding[], tallies: readonly KindTally[], settlement?: SettlementCover): string[] {
  const lines: string[] = [];
  const reordered = new Set(truth.benign_faults.filter((b) => b.fault === 'reordered' && b.environment === 'sandbox').map((b) => b.entity_id));
  // An attempt the simulator gave up on after its timeout may have been committed here: its retry
  // is then a real duplicate the simulator did not plan, listed in its uncertain deliveries.
  const uncertain = new Set(truth.uncertain_deliveries.filter((u) => u.environment === 'sandbox').map((u) => `delivery of ${u.entity_id}, event ${u.event_key.slice(0, 12)}`));
  // A credit the bank booked before its payout's webhook was stored: the webhook's delivery was
  // answered 5xx or timed out (an uncertain delivery: the ledger stalled), a pass in between flagged
  // the credit, and the payout event came after it (late_payouts), resolving the finding. A payout
  // event stored before the finding makes it a false positive, unexplained.
  const uncertainPayouts = new Set(truth.uncertain_deliveries.filter((u) => u.environment === 'sandbox' && u.topic.startsWith('payout/')).map((u) => u.entity_id));
  const laterPayout = new Set(found.filter((f) => f.kind === 'statement_credit_without_payout' && (f.late_payouts ?? []).some((p) => uncertainPayouts.has(p))).map((f) => `${f.entity_type} ${f.entity_id}`));
  for (const t of tallies) {
    const injected = new Map<string, ExpectedDiscrepancy>();
    for (const d of truth.discrepancies) if (d.kind === t.kind && d.environment === 'sandbox') injected.set(truthKey(d), d);
    const foundByKey = foundKeys(t.kind, found);
    // Each explained difference with the short name of its explanation, for the count beyond the named ones.
    const explained: { line: string; why: string }[] = [];
    const unexplained: string[] = [];
    let needsDays = 0;
    for (const [key, d] of injected) {
      if (foundByKey.has(key)) continue;
      if (NEEDS_REAL_DAYS.has(t.kind)) needsDays += 1;
      else if (settlement !== undefined && shortCreditNotYetJudged(d, settlement)) explained.push({ line: `${key} injected (${d.fault}), not found: its credit is short, judged once the statements cover PAYOUT_SETTLEMENT_DAYS (${settlement.days}) after the payout; the last imported one ends ${settlement.statementsEnd?.toISOString() ?? '(none imported)'}`, why: 'short credit, settlement window not yet covered' });
      else if (d.kind === 'buyer_paid_merchant_directly' && d.status === 'resolved' && settlement?.deductedUnseen?.has(d.entity_id)) {
        explained.push({ line: `${key} injected (${d.fault}), not found: a payout report deducting its buyer payment was imported before any pass saw the credit, so there was nothing to report`, why: 'deducted before a pass saw it' });
      } else if (d.timing_dependent) explained.push({ line: `${key} injected (${d.fault}), not found: its held-back delivery arrived before any pass saw it late`, why: 'held back, arrived before a pass saw it late' });
      else unexplained.push(`${key} injected (${d.fault}), not found: ${UNEXPLAINED}`);
    }
    for (const [key, statuses] of foundByKey) {
      if (injected.has(key)) continue;
      const entity = key.startsWith('order ') ? key.slice('order '.length) : undefined;
      if (t.kind === 'missed_webhook' && entity !== undefined && reordered.has(entity) && statuses.every((status) => status === 'resolved')) {
        explained.push({ line: `${key} found, not injected as a fault: one of its events was delivered out of order, flagged while it was missing and resolved when it came`, why: 'delivered out of order, resolved when it came' });
      } else if (t.kind === 'duplicate_delivery' && uncertain.has(key.slice(0, key.lastIndexOf(', copy ')))) {
        explained.push({ line: `${key} found, not injected: a retry of an attempt that timed out or was answered 5xx but was stored here (an uncertain delivery of its ground truth)`, why: 'retry of an attempt that timed out or was answered 5xx' });
      } else if (t.kind === 'statement_credit_without_payout' && statuses.every((status) => status === 'resolved') && laterPayout.has(key)) {
        explained.push({ line: `${key} found, not injected: a pass saw the credit before its payout's webhook was stored, and the finding was resolved when it came`, why: 'credit seen before its payout\'s webhook, resolved when it came' });
      } else unexplained.push(`${key} found, not injected: ${UNEXPLAINED}`);
    }
    const days = needsDays > 0 ? `  difference: ${t.kind} ${needsDays} not found: it needs ${NEEDS_REAL_DAYS.get(t.kind)} of real time, longer than a demo` : undefined;
    // The unexplained come first, and the count of those beyond the named ones is said: a defect
    // must not hide behind explained differences.
    const named = [...unexplained, ...explained.map((e) => e.line)];
    if (named.length === 0) {
      if (days !== undefined) lines.push(days);
      // Every key on both sides, yet the counts differ: some entity found more often than injected.
      else if (t.found !== t.injected) lines.push(`  difference: ${t.kind} found ${t.found}, injected ${t.injected}: the same entities, some found more than once: ${UNEXPLAINED}`);
      continue;
    }
    lines.push(`  difference: ${t.kind} found ${t.found}, injected ${t.injected}:`);
    for (const line of named.slice(0, NAMED_PER_KIND)) lines.push(`    ${line}`);
    const more = named.length - NAMED_PER_KIND;
    const moreUnexplained = Math.max(0, unexplained.length - NAMED_PER_KIND);
    if (more > 0) {
      // The explained ones beyond those named, counted by their explanation (the named may all be of another).
      const beyond = new Map<string, number>();
      for (const e of explained.slice(Math.max(0, NAMED_PER_KIND - unexplained.length))) beyond.set(e.why, (beyond.get(e.why) ?? 0) + 1);
      const whys = [...beyond].map(([why, n]) => `${n} ${why}`).join('; ');
      lines.push(moreUnexplained === 0
        ? `    and ${more} more, explained by the ground truth: ${whys}`
        : `    and ${more} more, ${moreUnexplained} of them ${UNEXPLAINED}${whys ? `; explained: ${whys}` : ''}`);
    }
    if (days !== undefined) lines.push(days);
  }
  return lines;
}

/**
 * The signature check, from the simulator's own record of every attempt and its answer: each 401
 * must be a copy it signed with the other environment's key (wrong_secret), and no such copy may be
 * answered 2xx. (The receiver's refusal counter counts the same 401s and cannot disagree with them.)
 */
export function signatureDifferences(attempts: readonly AttemptRecord[]): string[] {
  const sandbox = attempts.filter((a) => a.env === 'sandbox');
  const refusedGenuine = new Set(sandbox.filter((a) => a.status === 401 && a.variant !== 'wrong_secret').map((a) => a.eventKey)).size;
  const acceptedForged = new Set(sandbox.filter((a) => a.variant === 'wrong_secret' && a.status !== null && a.status >= 200 && a.status < 300).map((a) => a.eventKey)).size;
  const out: string[] = [];
  if (refusedGenuine > 0) out.push(`${refusedGenuine} correctly signed deliveries answered 401`);
  if (acceptedForged > 0) out.push(`${acceptedForged} copies signed with the wrong key answered 2xx`);
  return out;
}

/**
 * Deliveries the receiver acknowledged (a 2xx, by the simulator's record) whose event is not in
 * webhook_deliveries: each one lost. Keys, as the simulator computes the ledger's event identity.
 * The simulator keeps the last 100,000 attempts (hours of a demo): older ones are not checked.
 */
export async function lostDeliveries(database: Database, attempts: readonly AttemptRecord[]): Promise<string[]> {
  const keys = [...new Set(attempts.filter((a) => a.env === 'sandbox' && a.status !== null && a.status >= 200 && a.status < 300).map((a) => a.eventKey))];
  if (keys.length === 0) return [];
  return keysNotStored(database, keys);
}

/** The event keys of `keys` no sandbox delivery in webhook_deliveries carries. */
async function keysNotStored(database: Database, keys: readonly string[]): Promise<string[]> {
  const rows = await database.sql<{ key: string }[]>`
    select k as key from unnest(${keys as string[]}::text[]) as k
    where not exists (select 1 from webhook_deliveries w where w.environment = 'sandbox' and w.event_key = k)`;
  return rows.map((r) => r.key);
}

/**
 * Deliveries the simulator sent (not the copies signed with the wrong key) that no attempt got a
 * 2xx for and that are not in webhook_deliveries: refused (a 403, a 413, a 5xx) or timed out until
 * the simulator gave up. Judged once settled, when nothing is left to retry; answered before, they
 * may still be retried. The answers each got, counted, name why.
 */
export async function unansweredDeliveries(database: Database, attempts: readonly AttemptRecord[]): Promise<{ keys: string[]; answers: string }> {
  const sent = attempts.filter((a) => a.env === 'sandbox' && a.variant !== 'wrong_secret');
  const answered = new Set(sent.filter((a) => a.status !== null && a.status >= 200 && a.status < 300).map((a) => a.eventKey));
  const candidates = [...new Set(sent.filter((a) => !answered.has(a.eventKey)).map((a) => a.eventKey))];
  if (candidates.length === 0) return { keys: [], answers: '' };
  const keys = new Set(await keysNotStored(database, candidates));
  const counts = new Map<string, number>();
  for (const a of sent) {
    if (!keys.has(a.eventKey)) continue;
    const answer = a.status !== null ? String(a.status) : a.error ?? 'no answer';
    counts.set(answer, (counts.get(answer) ?? 0) + 1);
  }
  return { keys: [...keys], answers: [...counts].map(([answer, n]) => `${answer} x${n}`).join(', ') };
}

/**
 * The injected buyer credits (buyer_paid_merchant_directly, deducted by the end) that no pass can
 * have seen undeducted: a payout report deducting a buyer payment for their invoice was imported
 * before any pass began after their statement's import. The demo imports a round's statement and
 * payout reports together, so a pass between them is a matter of timing; without one, the rule
 * never had a credit to report (docs/how-it-decides.md: it resolves on that deduction).
 */
async function buyerCreditsDeductedUnseen(database: Database, truth: GroundTruth): Promise<Set<string>> {
  const credits = truth.discrepancies.filter((d) => d.kind === 'buyer_paid_merchant_directly' && d.environment === 'sandbox' && d.status === 'resolved');
  if (credits.length === 0) return new Set();
  const rows = await database.sql<{ ref: string }[]>`
    select c.ref
    from unnest(${credits.map((d) => d.entity_id)}::text[], ${credits.map((d) => d.external_reference_id ?? '')}::text[]) as c(ref, invoice)
    join statement_lines l on l.environment = 'sandbox' and l.bank_reference = c.ref
    join bank_statements b on b.id = l.statement_id
    where exists (
      select 1 from payout_report_rows w join payout_reports r on r.id = w.report_id
      where w.environment = 'sandbox' and w.doc_type = 'buyer_payment' and w.doc_no = c.invoice
        and not exists (select 1 from reconcile_runs x
                        where x.environment = 'sandbox' and x.started_at >= b.imported_at and x.started_at < r.imported_at))`;
  return new Set(rows.map((r) => r.ref));
}

/** Every delivery refused for its signature, from the counter the receiver increments for each. */
export async function badSignatureCount(deliveries: Counter<'outcome' | 'parse_status'>): Promise<number> {
  const { values } = await deliveries.get();
  return values.filter((v) => v.labels.outcome === 'bad_signature').reduce((sum, v) => sum + v.value, 0);
}

/**
 * The demo's summary line and per-kind tallies. `settled`: the simulator stopped injecting and
 * everything in flight was judged, so each difference is named from the ground truth; while it
 * runs, a difference may still be on its way and is described as such.
 */
export interface DemoSummary {
  text: string;
  /** the summary names a difference the ground truth does not explain: a defect (the demo exits 1) */
  defect: boolean;
}

export async function demoSummary(database: Database, sim: Simulator, refusedSignatures: number, graceSeconds: number, settlementDays: number, dataDir?: string, settled = false): Promise<DemoSummary> {
  const truth = sim.groundTruth({ environment: 'sandbox' });
  const [deliveries] = await database.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries`;
  const [open] = await database.sql<{ n: number }[]>`select count(*)::int as n from discrepancies where status = 'open'`;
  const injectedBadSignatures = truth.rejected_deliveries.length;
  const attempts = sim.attempts();
  const signatures = signatureDifferences(attempts);
  const lost = await lostDeliveries(database, attempts);
  const stats = sim.stats();
  const head =
    `[real ${new Date().toISOString().slice(11, 19)} UTC | simulated ${stats.simTime.slice(0, 16).replace('T', ' ')}] ` +
    `deliveries stored ${deliveries?.n ?? 0}, acknowledged (2xx) but not stored ${lost.length}, open discrepancies ${open?.n ?? 0}, ` +
    `bad signatures refused ${refusedSignatures} times (${injectedBadSignatures} injected copies signed with the other environment's key, each retried; ` +
    `${signatures.length === 0 ? 'every refusal one of them, none of them accepted' : `${signatures.join(', ')}: a difference`})`;
  const tallies = compareTallies(tallyInjected(truth), await tallyFound(database));
  // Lost deliveries and wrong answers to signatures are differences whether settled or not: no
  // later delivery or pass brings them back.
  const delivered = [
    ...(lost.length === 0 ? [] : [`  difference: ${lost.length} deliveries answered 2xx are not in webhook_deliveries (event keys ${lost.slice(0, NAMED_PER_KIND).join(', ')}${lost.length > NAMED_PER_KIND ? ', ...' : ''}): ${UNEXPLAINED}`]),
    ...(signatures.length === 0 ? [] : [`  difference: ${signatures.join(', ')}: ${UNEXPLAINED}`]),
  ];
  if (!settled) return { text: [head, ...delivered, ...describeTallies(tallies, graceSeconds, dataDir)].join('\n'), defect: delivered.length > 0 };
  const unanswered = await unansweredDeliveries(database, attempts);
  if (unanswered.keys.length > 0) {
    delivered.push(`  difference: ${unanswered.keys.length} deliveries the simulator gave up on were never answered 2xx and are not stored (answers: ${unanswered.answers}; event keys ${unanswered.keys.slice(0, NAMED_PER_KIND).join(', ')}${unanswered.keys.length > NAMED_PER_KIND ? ', ...' : ''}): ${UNEXPLAINED}`);
  }
  const found = await database.sql<FoundFinding[]>`
    select d.kind::text as kind, d.entity_type::text as entity_type, d.entity_id, d.status::text as status, d.subject,
           w.event_key, w.entity_id::text as delivered_entity_id,
           case when d.kind = 'statement_credit_without_payout' then (
             select case when count(*) > 0 and bool_and(p.received_at >= d.first_detected_at - interval '1 minute')
                         then array_agg(distinct p.payout_uuid::text) end
             from payout_events p
             where p.environment = d.environment
               and ${sepaKey(database.sql, database.sql`p.sepa_instruction_id`)} = ${sepaKey(database.sql, database.sql`d.sepa_reference`)}) end as late_payouts
    from discrepancies d
    left join webhook_deliveries w on d.kind = 'duplicate_delivery' and d.entity_type = 'webhook_delivery' and w.id::text = d.entity_id
    where d.environment = 'sandbox'`;
  // Epoch milliseconds, not the timestamptz: drizzle sets the client's timestamp parsers to identity,
  // so a timestamptz arrives as text (a Date was assumed here, and the final summary failed).
  const [end] = await database.sql<{ end_ms: number | null }[]>`
    select (extract(epoch from max(period_to)) * 1000)::float8 as end_ms from statement_periods where environment = 'sandbox'`;
  const statementsEnd = end?.end_ms === null || end?.end_ms === undefined ? undefined : new Date(end.end_ms);
  const deductedUnseen = await buyerCreditsDeductedUnseen(database, truth);
  const differences = [...delivered, ...nameDifferences(truth, found, tallies, { days: settlementDays, statementsEnd, deductedUnseen })];
  const all = `${dataDir === undefined ? '' : `RECON_DATA_DIR=${dataDir} `}npx bnpl-recon report discrepancies --status all`;
  const text = [head, `  found/injected: ${tallies.map((t) => `${t.kind} ${t.found}/${t.injected}`).join(', ')}`,
    ...(differences.length === 0 ? [`  every delivery answered 2xx is stored and every finding matches one injected, by kind and entity; the findings: ${all}`] : differences)].join('\n');
  // Every line of a difference the ground truth cannot explain ends with UNEXPLAINED (nameDifferences, above).
  return { text, defect: differences.some((line) => line.includes(UNEXPLAINED)) };
}
