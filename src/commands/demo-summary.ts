import type { Counter } from 'prom-client';
import type { Database } from '../db/database.js';
import type { ExpectedDiscrepancy, GroundTruth, Simulator } from '../../sim/index.js';

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
}

/** Kinds keyed by order in both the ground truth and the ledger: a difference can be named per order. */
const ORDER_KEYED = new Set(['missed_webhook', 'orphan_webhook']);
const NAMED_PER_KIND = 5;
const UNEXPLAINED = 'unexplained by the ground truth (a defect: please report it with the seed)';

/**
 * After the demo settled (no injection, retries and held-back deliveries done, a grace period, a
 * last poll and pass), names each order where the ledger and the simulator's ground truth differ
 * by what the ground truth says happened to it: a delivery held back past the grace period
 * (timing_dependent: flagged only if a pass ran while it was late), or one delivered out of order
 * (a benign reordering, flagged while its successor was there and it was not). An order the ground
 * truth does not explain is said to be unexplained, not guessed at.
 */
export function nameDifferences(truth: GroundTruth, found: readonly FoundFinding[], tallies: readonly KindTally[]): string[] {
  const lines: string[] = [];
  for (const t of tallies) {
    if (!ORDER_KEYED.has(t.kind)) {
      if (t.found === t.injected) continue;
      // An attempt the simulator gave up on after its timeout may have been committed here: its retry
      // is then a real duplicate the simulator did not plan, listed in its uncertain deliveries.
      const uncertain = truth.uncertain_deliveries.filter((u) => u.environment === 'sandbox').length;
      if (t.kind === 'duplicate_delivery' && t.found > t.injected && t.found - t.injected <= uncertain) {
        lines.push(`  difference: duplicate_delivery ${t.found - t.injected} found beyond those injected: retries of attempts that timed out at the simulator (${uncertain} uncertain deliveries in its ground truth) but were stored here`);
        continue;
      }
      lines.push(needsRealDays(t) ?? `  difference: ${t.kind} found ${t.found}, injected ${t.injected}: unexplained by the ground truth (a defect: please report it with the seed)`);
      continue;
    }
    const injected = new Map<string, ExpectedDiscrepancy>();
    for (const d of truth.discrepancies) if (d.kind === t.kind && d.environment === 'sandbox') injected.set(d.entity_id, d);
    const foundOrders = new Map<string, string[]>();
    for (const f of found) if (f.kind === t.kind && f.entity_type === 'order') foundOrders.set(f.entity_id, [...(foundOrders.get(f.entity_id) ?? []), f.status]);
    const reordered = new Set(truth.benign_faults.filter((b) => b.fault === 'reordered' && b.environment === 'sandbox').map((b) => b.entity_id));
    // Each explained difference with the short name of its explanation, for the count beyond the named ones.
    const explained: { line: string; why: string }[] = [];
    const unexplained: string[] = [];
    for (const [order, d] of injected) {
      if (foundOrders.has(order)) continue;
      if (d.timing_dependent) explained.push({ line: `order ${order} injected (${d.fault}), not found: its held-back delivery arrived before any pass saw it late`, why: 'held back, arrived before a pass saw it late' });
      else unexplained.push(`order ${order} injected (${d.fault}), not found: ${UNEXPLAINED}`);
    }
    for (const [order, statuses] of foundOrders) {
      if (injected.has(order)) continue;
      if (reordered.has(order) && statuses.every((status) => status === 'resolved')) {
        explained.push({ line: `order ${order} found, not injected as a fault: one of its events was delivered out of order, flagged while it was missing and resolved when it came`, why: 'delivered out of order, resolved when it came' });
      } else unexplained.push(`order ${order} found, not injected: ${UNEXPLAINED}`);
    }
    // Equal counts can still hide one order missed and another found beyond: compared order by order.
    // The unexplained come first, and the count of those beyond the named ones is said: a defect
    // must not hide behind explained differences.
    const named = [...unexplained, ...explained.map((e) => e.line)];
    if (named.length === 0) continue;
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
  }
  return lines;
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
export async function demoSummary(database: Database, sim: Simulator, refusedSignatures: number, graceSeconds: number, dataDir?: string, settled = false): Promise<string> {
  const truth = sim.groundTruth({ environment: 'sandbox' });
  const [deliveries] = await database.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries`;
  const [open] = await database.sql<{ n: number }[]>`select count(*)::int as n from discrepancies where status = 'open'`;
  const injectedBadSignatures = truth.rejected_deliveries.length;
  // Each refused copy is retried by the provider, so attempts outnumber copies; the simulator's own
  // record of 401 answers is what our refusals must equal.
  const simulatorSaw401 = sim.attempts().filter((a) => a.status === 401).length;
  const stats = sim.stats();
  const head =
    `[real ${new Date().toISOString().slice(11, 19)} UTC | simulated ${stats.simTime.slice(0, 16).replace('T', ' ')}] ` +
    `deliveries stored ${deliveries?.n ?? 0}, open discrepancies ${open?.n ?? 0}, ` +
    `bad signatures refused ${refusedSignatures} times (${injectedBadSignatures} injected copies signed with the other environment's key, each retried; ` +
    `${refusedSignatures === simulatorSaw401 ? 'as expected' : `the simulator counted ${simulatorSaw401} refusals: a difference`})`;
  const tallies = compareTallies(tallyInjected(truth), await tallyFound(database));
  if (!settled) return [head, ...describeTallies(tallies, graceSeconds, dataDir)].join('\n');
  const found = await database.sql<FoundFinding[]>`
    select kind::text as kind, entity_type::text as entity_type, entity_id, status::text as status from discrepancies where environment = 'sandbox'`;
  const differences = nameDifferences(truth, found, tallies);
  const all = `${dataDir === undefined ? '' : `RECON_DATA_DIR=${dataDir} `}npx bnpl-recon report discrepancies --status all`;
  return [head, `  found/injected: ${tallies.map((t) => `${t.kind} ${t.found}/${t.injected}`).join(', ')}`,
    ...(differences.length === 0 ? [`  every kind's found count equals what was injected; the findings: ${all}`] : differences)].join('\n');
}
