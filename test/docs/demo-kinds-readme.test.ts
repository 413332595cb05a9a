import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_BUSINESS, DEMO_FAULT_RATES } from '../../src/commands/demo-settings.js';
import { DISCREPANCY_KINDS } from '../../src/schema/discrepancies.js';
import { DAY_MS, startSimulator } from '../../sim/index.js';

/**
 * README.md, "A five-minute tour": "A minute holds six simulated days, and every kind of discrepancy
 * shows in it but three: payout_not_on_statement and invoice_not_paid_out ... and the simulator never
 * injects state_mismatch" (demo --help says the same). The code has 17 kinds (src/schema/discrepancies.ts);
 * test/commands/demo-kinds.test.ts checks only CONTRACT.md's 16, so statement_unbalanced (how-it-decides.md)
 * was never held to the sentence: the simulator never writes an unbalanced statement and the demo never
 * sets STATEMENT_ACCEPT_UNBALANCED, so a demo shows four kinds never (seen in a 60 s `demo --duration 60`).
 */
const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8').replace(/\s+/g, ' ');

describe('the README on the kinds a demo minute shows', () => {
  it('every kind of the code but the three it names is injected in six simulated days', { timeout: 120_000 }, async () => {
    const sentence = /every kind of discrepancy shows in it but (\w+): (.*?)\. /.exec(README);
    expect(sentence, 'README names the kinds a demo minute does not show').not.toBeNull();
    const notShown = [...sentence![2]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).filter((k) => (DISCREPANCY_KINDS as readonly string[]).includes(k));
    const sim = await startSimulator({ seed: '1', startTime: '2026-12-07T09:10:00Z', timeScale: 8640, faults: DEMO_FAULT_RATES, business: DEMO_BUSINESS });
    try {
      await sim.advance(6 * DAY_MS);
      const injected = new Set<string>(sim.groundTruth({ environment: 'sandbox' }).discrepancies.map((d) => d.kind));
      const missing = DISCREPANCY_KINDS.filter((k) => !notShown.includes(k) && !injected.has(k));
      expect(missing, `README says every kind but ${notShown.join(', ')} shows in a demo minute; never injected`).toEqual([]);
    } finally {
      await sim.stop();
    }
  });
});
