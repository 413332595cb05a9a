import { beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from '../e2e/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('ledger reparse: bad input and an unwritable ledger', () => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await createTestDatabase('reparse_since');
  });

  it('--since with an impossible calendar date (2024-02-30) is bad usage, exit 2', async () => {
    const env = cleanEnv({ DATABASE_URL: d.url, LOG_LEVEL: 'warn', PROVIDER_ENV: 'sandbox' });
    const result = await runCli(['ledger', 'reparse', '--dry-run', '--json', '--since', '2024-02-30'], env);
    // new Date('2024-02-30') is 2024-03-01: the run silently uses another instant than asked
    expect(result.code, result.stdout + result.stderr).toBe(2);
  });
});
