import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli } from '../e2e/cli.js';

/**
 * docs/settings.md: an invalid setting stops the command with exit status 2 and its name, and
 * PAYOUT_REFERENCE_PATTERN is "a Postgres regular expression". JavaScript's RegExp accepts patterns
 * Postgres refuses (a named group, \p{..}): `reconcile` exited 1 with Postgres's "invalid regular
 * expression: quantifier operand invalid" naming no setting, and `start` failed every pass. Postgres
 * now checks the pattern when a command opens the ledger (daemon/context.ts).
 */
describe('PAYOUT_REFERENCE_PATTERN is checked by Postgres when a command opens the ledger', () => {
  for (const pattern of ['(?<ref>PO)[0-9]{16}', '^\\p{Lu}{2}[0-9]+$']) {
    it(`reconcile exits 2 naming the setting for a pattern Postgres refuses (${pattern})`, { timeout: 60_000 }, async () => {
      const db = await createTestDatabase('cfg_pattern_reconcile');
      const result = await runCli(['reconcile'], cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', PAYOUT_REFERENCE_PATTERN: pattern }));
      expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining('invalid setting PAYOUT_REFERENCE_PATTERN') });
    });
  }

  it('start exits 2 naming the setting for a pattern Postgres refuses', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('cfg_pattern_start');
    const result = await runCli(
      ['start'],
      cleanEnv({
        DATABASE_URL: db.url,
        PORT: '0',
        METRICS_PORT: '0',
        LOG_LEVEL: 'silent',
        PROVIDER_BASE_URL: 'http://127.0.0.1:9',
        PROVIDER_API_KEY: 'test-key',
        WEBHOOK_SECRET: 'f3a9c1e7b2d84a6f9e0c5b7a1d3f8e2c',
        PAYOUT_REFERENCE_PATTERN: '(?<ref>PO)[0-9]{16}',
      }),
      30_000,
    );
    expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining('invalid setting PAYOUT_REFERENCE_PATTERN') });
  });

  it("reconcile accepts a Postgres pattern JavaScript's RegExp refuses ((?i) embedded option)", { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('cfg_pattern_pg_only');
    const result = await runCli(['reconcile'], cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', PAYOUT_REFERENCE_PATTERN: '(?i)^po[0-9]{16}$' }));
    expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({ code: 0, stderr: '' });
  });
});
