import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, spawnCli, type CliChild } from '../e2e/cli.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase } from '../helpers/database.js';
import { postDelivery, TEST_SECRET, type PostResult } from '../helpers/receiver.js';
import { startProxy, type Proxy } from '../helpers/tcp-proxy.js';
import { sleep } from '../helpers/wait.js';
import { Loopback, json } from '../poller/loopback-provider.js';

/**
 * operating.md: "The first SIGTERM stops accepting, answers 503 to deliveries on open connections,
 * waits for acknowledged deliveries to commit, aborts a poll in progress, waits for a pass,
 * releases the advisory locks and closes the pool (within SHUTDOWN_TIMEOUT_MS), then exits 0."
 *
 * Here the ledger goes silent first (every connection half-open, new ones too: no answer, no
 * reset, as a primary frozen or partitioned away leaves them), with a delivery waiting for its
 * commit and a pass on the pool. Neither can finish, and nothing in flight was acknowledged (a 2xx
 * comes only after a commit returned), so the stop is complete once they are given up: exit 0
 * inside SHUTDOWN_TIMEOUT_MS, not the deadline's 1 after it.
 */
const SHUTDOWN_TIMEOUT_MS = 15_000;
let proxy: Proxy | undefined;
let provider: Loopback | undefined;
const children: CliChild[] = [];
afterAll(async () => {
  for (const c of children) c.kill();
  await proxy?.close();
  await provider?.close();
});

describe('SIGTERM while the ledger is silent (half-open connections)', () => {
  it('gives up the unacknowledged delivery and the pass, and exits 0 within SHUTDOWN_TIMEOUT_MS', { timeout: 90_000 }, async () => {
    const db = await createTestDatabase('ops_sigterm_half_open');
    proxy = await startProxy(new URL(db.url));
    // A provider that knows no orders: the daemon needs one to start; it plays no part here.
    provider = new Loopback((_req, res) => json(res, 200, { orders: [] }));
    const providerUrl = await provider.listen();
    const child = spawnCli(
      ['start'],
      cleanEnv({
        DATABASE_URL: proxy.url,
        PORT: '0',
        METRICS_PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        PROVIDER_BASE_URL: providerUrl,
        PROVIDER_API_KEY: 'test-key',
        WEBHOOK_SECRET: TEST_SECRET,
        // A pass every second: one is on the pool when the ledger goes silent.
        RECONCILE_SCHEDULE: '* * * * * *',
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      }),
    );
    children.push(child);
    const running = await child.waitForLog('bnpl-recon running', 60_000);
    const url = `${String(running.url)}/webhooks`;
    const before = await postDelivery(url, JSON.stringify(samplePayload('order/confirmed', 1)));
    expect(before.status).toBe(200);
    await child.waitForLog('reconcile pass complete', 20_000);

    proxy.freeze();
    // A delivery whose commit waits on a silent connection; the next pass waits on its lock session.
    const pending: Promise<PostResult | Error> = postDelivery(url, JSON.stringify(samplePayload('order/confirmed', 2))).catch((e: unknown) => e as Error);
    await sleep(1_500);
    const signalledAt = Date.now();
    child.child.kill('SIGTERM');
    const outcome = await Promise.race([child.exited, sleep(SHUTDOWN_TIMEOUT_MS + 10_000).then(() => 'still running' as const)]);
    const stoppedAfterMs = Date.now() - signalledAt;
    const delivery = await pending;
    const deadlineLine = child.logs().find((l) => l.msg === 'shutdown deadline passed; some components did not stop');
    expect({ outcome, deadline: deadlineLine ? deadlineLine.notStopped : 'not passed' }).toEqual({ outcome: { code: 0, signal: null }, deadline: 'not passed' });
    expect(stoppedAfterMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    // The delivery in flight was not acknowledged: the provider sends it again.
    expect(delivery instanceof Error ? 'no answer' : delivery.status).not.toBe(200);
  });
});
