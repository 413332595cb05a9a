import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { command } from '../../src/commands/demo.js';
import { DEMO_BUSINESS, DEMO_FAULT_RATES } from '../../src/commands/demo-settings.js';
import { DAY_MS, startSimulator } from '../../sim/index.js';

// Every kind of CONTRACT.md's discrepancy table.
const KINDS = [
  'missed_webhook', 'state_mismatch', 'orphan_webhook', 'duplicate_event', 'duplicate_delivery', 'payout_not_on_statement',
  'statement_credit_without_payout', 'payout_amount_mismatch', 'payout_cancelled_but_credited', 'payout_unknown_invoice',
  'invoice_not_paid_out', 'invoice_paid_out_twice', 'payout_pays_canceled_invoice', 'buyer_paid_merchant_directly',
  'payout_deduction_mismatch', 'payout_report_mismatch',
];
// What `demo --help` says a minute does not show, and why.
const NOT_SHOWN = ['payout_not_on_statement', 'invoice_not_paid_out', 'state_mismatch', 'statement_unbalanced'];

describe('a minute of the demo', () => {
  it('`demo --help` names the kinds a minute does not show', () => {
    const help = command.help.replace(/\s+/g, ' ');
    expect(help).toMatch(/every kind of discrepancy shows but four: payout_not_on_statement and invoice_not_paid_out need PAYOUT_SETTLEMENT_DAYS and INVOICE_PAYOUT_DAYS of real time, state_mismatch is never injected .*, and statement_unbalanced neither/);
  });

  // `demo --help`: "a minute holds six simulated days ... every kind of discrepancy shows but four".
  // The demo's simulator options (demo.ts, demo-settings.ts) at 8640x, for its default seed at
  // several times of day (it starts at the real time) and other seeds.
  it.each([
    ['1', '2026-12-06T21:00:00Z'],
    ['1', '2026-12-07T03:30:00Z'],
    ['1', '2026-12-07T09:10:00Z'],
    ['1', '2026-12-07T15:45:00Z'],
    ['2', '2026-12-07T12:00:00Z'],
    ['5', '2026-12-07T00:00:00Z'],
  ])('seed %s from %s injects every kind of discrepancy but those the help names', async (seed, startTime) => {
    const sim = await startSimulator({ seed, startTime, timeScale: 8640, faults: DEMO_FAULT_RATES, business: DEMO_BUSINESS });
    try {
      await sim.advance(6 * DAY_MS);
      const injected = new Set<string>(sim.groundTruth({ environment: 'sandbox' }).discrepancies.map((d) => d.kind));
      expect(KINDS.filter((k) => !injected.has(k) && !NOT_SHOWN.includes(k))).toEqual([]);
      expect(injected.has('state_mismatch')).toBe(false);
    } finally {
      await sim.stop();
    }
  }, 120_000);
});

describe('the demo\'s payout reports', () => {
  // A report left with no rows names no payout: the import refuses it ("the file holds no rows") and
  // the injected payout_report_mismatch could never be found. A demo (seed 7, started at 11:19 UTC)
  // called one unexplained: its payout listed a single invoice and no deduction, and that row was
  // the one left out. The demo starts at the real time, so which payouts are so small varies.
  it.each([
    ['7', '2026-12-06T11:19:00Z'],
    ['7', '2026-12-06T03:00:00Z'],
    ['1', '2026-12-07T09:10:00Z'],
    ['3', '2026-12-07T18:20:00Z'],
  ])('seed %s from %s: every report with a payout_report_mismatch injected keeps a row to tie it to its payout', async (seed, startTime) => {
    const sim = await startSimulator({ seed, startTime, timeScale: 8640, faults: DEMO_FAULT_RATES, business: DEMO_BUSINESS });
    const dir = await mkdtemp(path.join(tmpdir(), 'bnpl-demo-reports-'));
    try {
      await sim.advance(6 * DAY_MS);
      const injected = sim.groundTruth({ environment: 'sandbox' }).discrepancies.filter((d) => d.kind === 'payout_report_mismatch');
      expect(injected.length).toBeGreaterThan(0);
      const files = await sim.writePayoutReports(dir, { format: 'csv' });
      const empty: string[] = [];
      for (const d of injected) {
        const file = files.find((f) => path.basename(f) === `sandbox-payout-${d.sepa_reference}.csv`);
        expect(file, `the report of payout ${d.entity_id}`).toBeDefined();
        const lines = (await readFile(file!, 'utf8')).split('\r\n').filter((l) => l !== '');
        if (lines.length < 2) empty.push(d.entity_id);
      }
      expect(empty).toEqual([]);
    } finally {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
