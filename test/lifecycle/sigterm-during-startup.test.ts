import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { cleanEnv, spawnCli, type CliChild } from '../e2e/cli.js';
import { waitFor } from '../helpers/wait.js';
import { Loopback, json } from '../poller/loopback-provider.js';

/**
 * operating.md: "The first SIGTERM stops accepting ... closes the pool (within SHUTDOWN_TIMEOUT_MS),
 * then exits 0." A SIGTERM that arrives while `start` is still starting (here: fetching the
 * signing secrets from GET /webhooks/keys, WEBHOOK_SECRET unset, the provider slow) stops the start
 * after the step under way: no listener opens, no job starts, and the process exits 0.
 */
let provider: Loopback | undefined;
const children: CliChild[] = [];
afterAll(async () => {
  for (const c of children) c.kill();
  await provider?.close();
});

describe('SIGTERM while start fetches the signing secrets', () => {
  it('exits within SHUTDOWN_TIMEOUT_MS', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase('ops_sigterm_startup');
    let keysAsked = 0;
    provider = new Loopback((req, res, url) => {
      if (url.pathname.endsWith('/webhooks/keys')) {
        keysAsked += 1;
        // Slow, but inside the 2 s the receiver gives the first fetch.
        provider!.later(1500, () => json(res, 200, ['0123456789abcdef0123456789abcdef']));
      } else json(res, 200, { orders: [] });
    });
    const url = await provider.listen();
    const child = spawnCli(
      ['start'],
      cleanEnv({
        DATABASE_URL: db.url,
        PORT: '0',
        METRICS_PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        PROVIDER_BASE_URL: url,
        PROVIDER_API_KEY: 'test-key',
        POLL_SCHEDULE: '* * * * * *',
        SHUTDOWN_TIMEOUT_MS: '3000',
      }),
    );
    children.push(child);
    await waitFor('the daemon asking for the signing secrets', () => (keysAsked > 0 ? true : undefined), 30_000, 20);
    child.child.kill('SIGTERM');
    const outcome = await Promise.race([child.exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 3000 + 7000))]);
    const logs = child.logs();
    const running = logs.some((l) => l.msg === 'bnpl-recon running');
    // Nor does a listener open after the signal (daemon.ts stops the start after the secrets'
    // fetch): one opened on a database the drain had already closed.
    const stopAt = logs.findIndex((l) => l.msg === 'shutting down');
    const listenersAfter = logs.slice(stopAt + 1).map((l) => String(l.msg)).filter((m) => m.endsWith('listening'));
    expect(stopAt).toBeGreaterThanOrEqual(0);
    expect({ outcome, startedAfterSigterm: running, listenersAfter }).toEqual({ outcome: { code: 0, signal: null }, startedAfterSigterm: false, listenersAfter: [] });
  });
});
