import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FAULTS, startSimulator, type Simulator } from '../../sim/index.js';
import { cleanEnv, spawnCli, type CliChild } from '../e2e/cli.js';
import { daemonEnv } from '../e2e/harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * docs/operating.md, "Shutdown, replicas, migrations": the first SIGTERM stops accepting, ... closes
 * the pool within SHUTDOWN_TIMEOUT_MS and exits 0; "Exit status 1 after a SIGTERM means a component
 * still had not stopped at SHUTDOWN_TIMEOUT_MS ... What the stop still waits for: [an archive's
 * write, fsync, rename, drop]. Beyond those, an exit 1 is a defect."
 *
 * Here a webhook sender (any client of PORT) is in the middle of sending its body when SIGTERM
 * comes: a slow or stalled sender, a proxy holding a connection. Nothing of it was acknowledged.
 */
const SHUTDOWN_TIMEOUT_MS = 3000;

describe('SIGTERM while a client is still sending a request body', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let child: CliChild | undefined;
  let socket: Socket | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('sigterm_slow_request');
    sim = await startSimulator({ seed: 'sigterm-slow-request', faults: NO_FAULTS, business: { ordersPerDay: 4 } });
  });
  afterAll(async () => {
    socket?.destroy();
    child?.kill();
    if (child) await child.exited;
    await sim?.stop();
  });

  it('exits 0 within SHUTDOWN_TIMEOUT_MS, not held by the unfinished request, which is cut off unanswered', { timeout: 60_000 }, async () => {
    child = spawnCli(['start'], cleanEnv(daemonEnv({ sim, databaseUrl: db.url, graceSeconds: 3600, extra: { LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) } })));
    const running = await child.waitForLog('bnpl-recon running');
    const url = new URL(String(running.url));
    socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve, reject) => socket!.once('connect', resolve).once('error', reject));
    socket.on('error', () => undefined);
    // Headers and the first bytes of a 1,000-byte body; the rest never comes (within the test).
    socket.write(`POST /webhooks HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"event_id":"`);
    await new Promise((r) => setTimeout(r, 300));

    const signalledAt = performance.now();
    process.kill(child.pid, 'SIGTERM');
    const exit = await Promise.race([child.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000))]);
    const tookMs = performance.now() - signalledAt;
    const deadlineLine = child.logs().find((l) => l.msg === 'shutdown deadline passed; some components did not stop');
    expect(deadlineLine?.notStopped, 'components named as not stopped at the deadline').toBeUndefined();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(tookMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    // Nothing of it was taken: no 2xx, nothing stored.
    expect(await db.sql`select count(*)::int as n from webhook_deliveries`).toEqual([{ n: 0 }]);
  });
});
