import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli } from '../e2e/cli.js';

/**
 * CONTRACT.md: "Every command ... exits ... 2 on bad usage or bad configuration (with a message
 * naming the setting at fault)"; settings.md: "an invalid one stops the command with exit status 2
 * and its name". A HOST that does not resolve fails at listen(), which names it and exits 2.
 */
describe('start with a HOST that cannot be bound', () => {
  it('exits 2 naming HOST', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('ops_bad_host');
    const result = await runCli(
      ['start'],
      cleanEnv({
        DATABASE_URL: db.url,
        HOST: 'no-such-host.invalid',
        PORT: '0',
        METRICS_PORT: '0',
        LOG_LEVEL: 'silent',
        PROVIDER_BASE_URL: 'http://127.0.0.1:9',
        PROVIDER_API_KEY: 'test-key',
        WEBHOOK_SECRET: 'f3a9c1e7b2d84a6f9e0c5b7a1d3f8e2c',
      }),
    );
    expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining('HOST') });
  });
});
