import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSummary } from '../../src/commands/demo-summary.js';
import type { GroundTruth, Simulator } from '../../sim/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { payoutEvent } from '../statements/fixtures.js';

const truth: GroundTruth = { seed: 's', start_time: '', sim_time: '', discrepancies: [], rejected_deliveries: [], uncertain_deliveries: [], benign_faults: [] };
function fakeSim(): Simulator {
  const stats = { planned: 0, unrouted: 0, attempted: 0, succeeded: 0, failed: 0, gaveUp: 0, pending: 0, inFlight: 0, events: 0, simTime: '2026-03-06T00:00:00.000Z', orders: { sandbox: 0, production: 0 } };
  return { groundTruth: () => truth, attempts: () => [], stats: () => stats } as unknown as Simulator;
}

/**
 * statement_credit_without_payout is raised only for a credit that carries no payout event's
 * reference, of any status (rules/payout-credit-without-payout.ts). A finding first detected a whole
 * day AFTER a payout event of its reference was stored is therefore not "a pass saw the credit before
 * its payout's webhook was stored": it is a real false positive, and the settled demo must call it
 * unexplained (exit 1). demo-summary.ts only asks whether SOME payout event of the reference was
 * stored after first detection (here: the payout's later payout/cancelled), and explains it away.
 */
describe("the settled demo's explanation of a statement_credit_without_payout", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('demo_credit_false_positive');
  });
  afterAll(async () => {
    await db?.close();
  });

  it('does not explain a credit flagged while its payout event was already stored', async () => {
    const sepa = 'PO2026030100000042';
    const uuid = '6f9d2f0e-3a4b-4c5d-8e9f-0a1b2c3d4e5f';
    // The payout's webhook was stored on 03-01 ...
    await payoutEvent(db, { uuid, sepa, cents: 10_000n, eventTime: '2026-03-01T06:00:00.000Z', receivedAt: '2026-03-01T06:00:01Z' });
    // ... a pass flagged its credit on 03-02 anyway (a false positive) ...
    await db.sql`
      insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, sepa_reference, observed, details, evidence,
                                 first_detected_at, last_checked_at, resolved_at)
      values ('sandbox', 'statement_credit_without_payout', 'resolved', 'statement_line', 'BANK-1', '', ${sepa}, '10000', 'A sentence.',
              '{}'::jsonb, '2026-03-02T12:00:00Z', '2026-03-03T12:00:00Z', '2026-03-03T12:00:00Z')`;
    // ... and the finding went away after a later event of the same payout came on 03-03.
    await payoutEvent(db, { uuid, status: 'cancelled', sepa, cents: 10_000n, eventTime: '2026-03-03T06:00:00.000Z', receivedAt: '2026-03-03T06:00:01Z' });

    const { text, defect } = await demoSummary(db, fakeSim(), 0, 10, 3, undefined, true);
    const line = text.split('\n').find((l) => l.includes('statement_line BANK-1')) ?? '(no line)';
    expect(line, text).toContain('unexplained');
    expect(defect, text).toBe(true);
  });
});
