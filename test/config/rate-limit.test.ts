import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { cleanEnv, REPO_ROOT } from '../e2e/cli.js';

/**
 * settings.md: RATE_LIMIT_RPS is the poller's own ceiling below the provider's 500 requests/s per
 * address (provider-api.md, Limits; the same in sandbox and production). A value above it could only
 * earn 429s and their waits, so the commands refuse it at startup like any other invalid setting.
 */
function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: REPO_ROOT, env: cleanEnv(env), encoding: 'utf8' });
}

describe('RATE_LIMIT_RPS against the provider\'s 500 requests/s per address', () => {
  it('accepts the limit itself and anything below it', () => {
    expect(loadConfig({ RATE_LIMIT_RPS: '500' }).RATE_LIMIT_RPS).toBe(500);
    expect(loadConfig({ RATE_LIMIT_RPS: '12.5' }).RATE_LIMIT_RPS).toBe(12.5);
    expect(loadConfig({}).RATE_LIMIT_RPS).toBe(450);
  });

  it.each(['start', 'poll'])('%s exits 2 on RATE_LIMIT_RPS=501, naming the setting, its value and the limit', (command) => {
    const result = cli([command], { RATE_LIMIT_RPS: '501', LOG_LEVEL: 'silent' });
    expect(result.status, result.stderr).toBe(2);
    expect(result.stderr).toContain('invalid setting RATE_LIMIT_RPS: 501 is above the provider\'s rate limit of 500 requests per second');
  });
});
