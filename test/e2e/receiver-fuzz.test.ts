import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, spawnCli, type CliChild } from './cli.js';
import { fuzzCaseArb, holdCaseArb, type FuzzCase } from './fuzz-cases.js';
import { sleep } from './harness.js';
import { exchange, type RawExchange } from './raw-http.js';
import { getText, metricValue } from './replica-probe.js';

/**
 * Hostile input against a real daemon (`bnpl-recon start`, its own process) on loopback with a
 * real Postgres: 10,000 generated requests over raw sockets (fuzz-cases.ts), 24 at a time. The
 * daemon stays up with nothing on stderr, answers no 5xx but 503, stores every delivery it
 * answered 2xx (byte for byte where the body is known), cuts silent clients off within its request
 * timeout, and its RSS (from its own /metrics) comes back near its baseline afterwards.
 */
const SECRET = 'whsec_fuzz_secret_0123456789';
const CASES = 10_000;
const HOLDS = 40;
const CONCURRENCY = 24;
const HEADERS_MS = 1500;
const REQUEST_MS = 2500;
const MAX_BODY = 1_048_576;
const SEED = Number(process.env.FUZZ_SEED ?? 15);

let db: TestDatabase;
useTestDatabase('receiver_fuzz', (database) => (db = database));
let daemon: CliChild;
let port = 0;
let metricsUrl = '';
const dataDir = mkdtempSync(path.join(tmpdir(), 'bnpl-fuzz-'));

beforeAll(async () => {
  daemon = spawnCli(['start'], cleanEnv({
    DATABASE_URL: db.url, RECON_DATA_DIR: dataDir, PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info',
    PROVIDER_ENV: 'sandbox', WEBHOOK_SECRET: SECRET, POLL_SCHEDULE: '0 0 1 1 *', RECONCILE_SCHEDULE: '0 0 1 1 *',
    // Nothing listens on port 9 (discard): this test is about the receiver.
    PROVIDER_BASE_URL: 'http://127.0.0.1:9', PROVIDER_API_KEY: 'fuzz-unused-key',
    SERVER_HEADERS_TIMEOUT_MS: String(HEADERS_MS), SERVER_REQUEST_TIMEOUT_MS: String(REQUEST_MS), WEBHOOK_MAX_BODY_BYTES: String(MAX_BODY), DB_POOL_MAX: '6',
  }));
  const running = await daemon.waitForLog('bnpl-recon running', 60_000);
  port = Number(new URL(String(running.url)).port);
  metricsUrl = String(running.metrics);
}, 90_000);

afterAll(async () => {
  daemon?.kill();
  await daemon?.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

const rss = async () => metricValue((await getText(metricsUrl)).text, 'process_resident_memory_bytes') ?? NaN;
const heap = async () => metricValue((await getText(metricsUrl)).text, 'nodejs_heap_size_used_bytes') ?? NaN;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('receiver under hostile input', () => {
  it(`survives ${CASES} hostile requests and ${HOLDS} silent clients, storing every delivery it acknowledged`, { timeout: 180_000 }, async () => {
    const limits = { secret: SECRET, maxBodyBytes: MAX_BODY, limitMs: REQUEST_MS + 5000 };
    const cases: FuzzCase[] = [...fc.sample(fuzzCaseArb(limits), { numRuns: CASES, seed: SEED }), ...fc.sample(holdCaseArb(limits), { numRuns: HOLDS, seed: SEED })];
    const run = async (list: FuzzCase[]) => {
      const out: { c: FuzzCase; r: RawExchange }[] = [];
      let next = 0;
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < list.length) {
          const c = list[next++]!;
          out.push({ c, r: await exchange(port, c.plan) });
        }
      }));
      return out;
    };
    // Warm up at full concurrency (JIT, pool, the allocator's arenas for 1 MiB bodies) before the
    // baseline, so it is the steady state's and growth after the run means memory kept.
    await run(fc.sample(fuzzCaseArb(limits), { numRuns: 1500, seed: SEED + 1 }));
    await sleep(2000);
    const baseline = await rss();
    const baselineHeap = await heap();
    let peak = baseline;
    const started = performance.now();
    const sampler = setInterval(() => void rss().then((v) => (peak = Math.max(peak, v)), () => undefined), 500);
    const results = await run(cases);
    clearInterval(sampler);
    const elapsed = performance.now() - started;

    const statuses = new Map<number, number>();
    const byFraming: Record<string, Record<string, number>> = {};
    const problems: string[] = [];
    const acked: { id: number; body?: Buffer }[] = [];
    for (const { c, r } of results) {
      const f = (byFraming[c.label.split('/')[0]!] ??= {});
      const key = r.responses.map((x) => x.status).join('+') || r.error || 'closed';
      f[key] = (f[key] ?? 0) + 1;
      for (const [i, res] of r.responses.entries()) {
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500 && res.status !== 503) problems.push(`${c.label}: ${res.status} ${res.body.toString().slice(0, 200)}`);
        if (res.status >= 200 && res.status < 300) {
          const id = Number((JSON.parse(res.body.toString()) as { delivery_id: number }).delivery_id);
          acked.push({ id, ...(c.mustStore ? { body: c.bodies[i]! } : {}) });
        }
      }
      if (c.mustStore) {
        const ok = r.responses.length === c.requests && r.responses.every((res) => res.status === 200 || res.status === 503);
        if (!ok) problems.push(`${c.label}: a signed JSON delivery was answered ${r.responses.map((x) => x.status).join(',') || 'nothing'}${r.error ? ` (${r.error})` : ''}`);
      }
      if (c.hold && (!r.closedByServer || r.ms > REQUEST_MS + 1000)) problems.push(`${c.label}: a silent client was held ${Math.round(r.ms)} ms (closed by the server: ${r.closedByServer})`);
      if (!c.hold && !r.closedByServer) problems.push(`${c.label}: no close within ${limits.limitMs} ms`);
    }

    await sleep(3000);
    const after = await rss();
    const afterHeap = await heap();
    const mb = (b: number) => Math.round(b / 1048576);
    console.info(`receiver fuzz: ${results.length} cases in ${Math.round(elapsed)} ms (seed ${SEED}), statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${acked.length} acknowledged, RSS baseline ${mb(baseline)} MB, peak ${mb(peak)} MB, after ${mb(after)} MB; heap used ${mb(baselineHeap)} MB before, ${mb(afterHeap)} MB after`);
    console.info(`receiver fuzz answers by framing: ${JSON.stringify(byFraming)}`);
    expect(problems.slice(0, 20)).toEqual([]);
    expect(acked.length).toBeGreaterThan(CASES / 3);

    // Every 2xx is in the ledger, with the bytes sent where the body is known.
    const rows = await db.sql<{ id: number; md5: string }[]>`select id::int as id, md5(raw_body) as md5 from webhook_deliveries where id = any(${acked.map((a) => a.id)}::bigint[])`;
    const stored = new Map(rows.map((row) => [row.id, row.md5]));
    expect(acked.filter((a) => !stored.has(a.id)).length, 'acknowledged deliveries missing from the ledger').toBe(0);
    expect(acked.filter((a) => a.body !== undefined && stored.get(a.id) !== md5(a.body)).length, 'stored bytes differing from those sent').toBe(0);

    // The process lived through it, said nothing on stderr, and logged no unstored delivery.
    expect(daemon.child.exitCode).toBeNull();
    expect(daemon.stderr()).toBe('');
    expect(daemon.logs().filter((l) => l.msg === 'webhook not stored' || Number(l.level) >= 60)).toEqual([]);
    // Memory comes back near the baseline (the peak holds up to 24 bodies of up to 1 MiB at once):
    // the RSS within 64 MiB + 25 % (the allocator keeps some pages). The heap is printed, not
    // asserted: nothing can make the daemon collect its garbage before the reading (47 -> 79 MB in
    // one run, 36 -> 38 MB in another).
    expect(after).toBeLessThan(baseline * 1.25 + 64 * 1048576);
  });
});
