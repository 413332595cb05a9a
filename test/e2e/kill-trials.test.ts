import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runKillTrials } from './kill-trials.js';

/**
 * Crash safety in npm test: 20 SIGKILLs of a daemon under load (`npm run soak` runs minutes of
 * them). Every acknowledged delivery is in the ledger with its event applied once and its typed row.
 */
describe('SIGKILL under load', () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
  });

  it('loses no acknowledged delivery and applies no event twice across kills', { timeout: 240_000 }, async () => {
    db = await createTestDatabase('kill_trials', { poolMax: 2 });
    // 20 short trials (load for 0.2-0.8 s, then SIGKILL): the restart dominates each one.
    const report = await runKillTrials({ databaseUrl: db.url, sql: db.sql, trials: 20, senders: 6, killAfterMs: [200, 800] });
    console.info(`kill trials: ${JSON.stringify(report)}`);
    expect(report.kills).toBe(20);
    expect(report.acknowledged).toBeGreaterThan(0);
    expect(report.lost).toBe(0);
    expect(report.appliedTwice).toBe(0);
    expect(report.missingTypedRows).toBe(0);
  });
});
