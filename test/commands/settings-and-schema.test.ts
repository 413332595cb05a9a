import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli } from '../e2e/cli.js';

/**
 * The CLI as a user runs it (`node --import tsx src/cli.ts …`, the same main as bin/bnpl-recon.js)
 * against a real Postgres: a migrated ledger, and one never migrated.
 */
let migratedUrl = '';
let emptyUrl = '';

beforeAll(async () => {
  migratedUrl = (await createTestDatabase('cli_settings_migrated')).url;
  emptyUrl = (await createTestDatabase('cli_settings_empty', { migrate: false })).url;
});

describe('PROVIDER_BASE_URL that is no http(s) address', () => {
  // settings.md: "an invalid one stops the command with exit status 2 and its name"; CONTRACT.md:
  // "2 on bad usage or bad configuration (with a message naming the setting at fault)".
  // `localhost:8090` (the scheme forgotten) parses as a URL of scheme `localhost:`, so the schema
  // lets it through and the provider client fails later with a bare "Invalid URL", exit 1.
  for (const value of ['localhost:8090', 'ftp://127.0.0.1:8090']) {
    it(`poll with PROVIDER_BASE_URL=${value} exits 2 naming PROVIDER_BASE_URL`, { timeout: 60_000 }, async () => {
      const result = await runCli(['poll'], cleanEnv({ DATABASE_URL: migratedUrl, PROVIDER_BASE_URL: value, PROVIDER_API_KEY: 'sbx_key', LOG_LEVEL: 'silent' }));
      expect({ code: result.code, namesSetting: result.stderr.includes('PROVIDER_BASE_URL'), stderr: result.stderr }).toEqual({
        code: 2,
        namesSetting: true,
        stderr: expect.any(String),
      });
    });
  }

  it('webhooks keys with PROVIDER_BASE_URL=localhost:8090 exits 2 naming PROVIDER_BASE_URL', { timeout: 60_000 }, async () => {
    const result = await runCli(['webhooks', 'keys'], cleanEnv({ DATABASE_URL: migratedUrl, PROVIDER_BASE_URL: 'localhost:8090', PROVIDER_API_KEY: 'sbx_key', LOG_LEVEL: 'silent' }));
    expect({ code: result.code, namesSetting: result.stderr.includes('PROVIDER_BASE_URL'), stderr: result.stderr }).toEqual({
      code: 2,
      namesSetting: true,
      stderr: expect.any(String),
    });
  });
});

describe('MIGRATE_ON_START=false on a ledger that was never migrated', () => {
  // The read commands say "the ledger's schema is behind … run 'bnpl-recon migrate'"; the writing
  // ones skip the schema check when they do not migrate, and then blame something else.
  it("poll says the schema needs 'bnpl-recon migrate', not that another process is polling", { timeout: 60_000 }, async () => {
    const result = await runCli(['poll'], cleanEnv({ DATABASE_URL: emptyUrl, MIGRATE_ON_START: 'false', PROVIDER_BASE_URL: 'http://127.0.0.1:1', PROVIDER_API_KEY: 'sbx_key', HTTP_MAX_RETRIES: '0', LOG_LEVEL: 'silent' }));
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(/another process is polling/);
    expect(result.stderr).toMatch(/schema is behind this version of bnpl-recon and MIGRATE_ON_START=false: run 'bnpl-recon migrate' first/);
  });

  it("reconcile says the schema needs 'bnpl-recon migrate', not 'relation … does not exist'", { timeout: 60_000 }, async () => {
    const result = await runCli(['reconcile'], cleanEnv({ DATABASE_URL: emptyUrl, MIGRATE_ON_START: 'false', LOG_LEVEL: 'silent' }));
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(/relation ".*" does not exist/);
    expect(result.stderr).toMatch(/schema is behind this version of bnpl-recon and MIGRATE_ON_START=false: run 'bnpl-recon migrate' first/);
  });
});
