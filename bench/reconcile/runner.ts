/**
 * Child process for bench/reconcile/index.ts: the passes over one seeded ledger, in a process of their
 * own, so the peak RSS reported is the reconciler's alone and not whatever the benchmark process did
 * before (the ingest part's load generator holds ~150 MiB of deliveries). Settings arrive as
 * environment variables: DATABASE_URL, GRACE_SECONDS, FULL_PASSES, CONTRACT_TERMS (JSON; unset: deductions not judged).
 *
 * A full pass is run FULL_PASSES times, the discrepancies and runs cleared in between, so one
 * slow pass on a shared machine does not decide the figure alone (every run is reported); then one
 * pass with nothing new, and one after a single new invoice event (removed again after it).
 */
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { silentLogger } from '../../src/log/logger.js';
import { runReconcilePass } from '../../src/reconcile/pass.js';
import type { PassSummary } from '../../src/reconcile/types.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { parseContractTerms } from '../../src/payout-reports/contract-terms.js';

const sql = createSqlClient(process.env.DATABASE_URL as string, { poolMax: 4 });
const database = databaseOver(sql);
const metrics = createMetrics(createRegistry({ defaultMetrics: false }), database, 'sandbox');
const ctx = {
  config: { PROVIDER_ENV: 'sandbox' as const, WEBHOOK_GRACE_SECONDS: Number(process.env.GRACE_SECONDS) },
  deductionTerms: process.env.CONTRACT_TERMS ? parseContractTerms(process.env.CONTRACT_TERMS) : null,
  log: silentLogger(),
  database,
  metrics,
};
const fullPasses = Number(process.env.FULL_PASSES ?? 1);

const startRss = process.memoryUsage().rss;
let peakRss = startRss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);

const full: PassSummary[] = [];
for (let i = 0; i < fullPasses; i += 1) {
  // Back to a ledger no pass has seen: the next pass is a full one again.
  if (i > 0) await sql`truncate discrepancy_history, discrepancies, reconcile_runs`;
  full.push(await runReconcilePass(ctx));
}
const noChange = await runReconcilePass(ctx);
// Then one invoice webhook of an invoice nobody lists: every invoice kind is judged again (there
// is no scope by invoice: reconcile/invoice-scope.ts), what a daemon's pass costs while invoices arrive.
await sql`
  insert into invoice_events (environment, event_key, topic, received_at, invoice_uuid, external_reference_id)
  values ('sandbox', md5('bench new invoice'), 'invoice/created', now(), md5('bench new invoice')::uuid, 'INV-BENCH-NEW')`;
const newInvoice = await runReconcilePass(ctx);
await sql`delete from invoice_events where event_key = md5('bench new invoice')`;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
await database.close();
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
function changes(s: PassSummary): number {
  return s.opened + s.reopened + s.resolved + s.duplicateDeliveries;
}
process.send?.({
  full: full.map((s) => ({ mode: s.mode, durationMs: s.durationMs, stepMs: s.stepMs })),
  noChange: { mode: noChange.mode, durationMs: noChange.durationMs, stepMs: noChange.stepMs, changes: changes(noChange), invoices: noChange.invoices },
  newInvoice: { mode: newInvoice.mode, durationMs: newInvoice.durationMs, changes: changes(newInvoice), invoices: newInvoice.invoices },
  startRssMib: mib(startRss),
  peakRssMib: mib(peakRss),
});
