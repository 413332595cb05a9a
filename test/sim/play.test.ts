import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../sim/index.js';
import { HOUR_MS } from '../../sim/time.js';
import { startReceiver } from './helpers.js';

describe('playing at a time scale', () => {
  it('runFor plays the business in scaled real time and never delivers before the simulated due time', async () => {
    const receiver = await startReceiver();
    // 2 simulated hours per real second: the two hours below take about a second.
    const sim = await startSimulator({ seed: 'play', timeScale: 7200, business: { ordersPerDay: 480 } });
    try {
      sim.register('sandbox', 'order/authorized', receiver.url);
      const before = sim.now();
      await sim.runFor(2 * HOUR_MS);
      expect(sim.now()).toBeGreaterThanOrEqual(before + 2 * HOUR_MS);
      await sim.drain({ fastForward: false });
      expect(receiver.received.length).toBeGreaterThan(10);
      // Nothing is sent before its simulated time; every planned authorized event arrived once.
      const due = new Map(sim.plannedDeliveries().map((p) => [p.seq, p.dueAt]));
      for (const a of sim.attempts()) expect(a.simAt).toBeGreaterThanOrEqual(due.get(a.seq) as number);
      const planned = sim.plannedDeliveries().filter((p) => p.env === 'sandbox' && p.topic === 'order/authorized');
      expect(receiver.received).toHaveLength(planned.length);
      expect(sim.stats()).toMatchObject({ failed: 0, pending: 0, inFlight: 0 });
    } finally {
      await sim.stop();
      await receiver.close();
    }
  });
});

describe('pausing the business', () => {
  it('plans no new event after pause(), while what was planned is still delivered', async () => {
    const receiver = await startReceiver();
    const sim = await startSimulator({ seed: 'pause', timeScale: 7200, business: { ordersPerDay: 480 } });
    try {
      sim.register('sandbox', 'order', receiver.url);
      sim.play();
      while (sim.stats().events < 20) await new Promise((r) => setTimeout(r, 50));
      sim.pause();
      const eventsAtPause = sim.stats().events;
      const plannedAtPause = sim.plannedDeliveries().length;
      await sim.drain();
      // An hour of simulated business would add dozens of orders; paused, it adds none.
      await new Promise((r) => setTimeout(r, 600));
      expect(sim.stats().events).toBe(eventsAtPause);
      expect(sim.plannedDeliveries().length).toBe(plannedAtPause);
      const planned = sim.plannedDeliveries().filter((p) => p.env === 'sandbox' && p.topic.startsWith('order/'));
      expect(planned.length).toBeGreaterThan(0);
      expect(receiver.received).toHaveLength(planned.length);
      expect(sim.stats()).toMatchObject({ pending: 0, inFlight: 0 });
    } finally {
      await sim.stop();
      await receiver.close();
    }
  });
});

describe('bnpl-recon sim', () => {
  it('serves the API, starts the business at the first registration and writes ground truth on SIGTERM', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'sim-cli-'));
    // One process (no tsx wrapper), so its exit is the simulator's own. Ten simulated hours a real
    // second: at 100 hours a second the files written on SIGTERM (ground truth, statements, every
    // payout's report in CSV and XLSX) covered weeks of business and took 5 s, over the 10 s
    // shutdown deadline on a loaded machine (exit 1 in CI).
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'sim', '--port', '0', '--seed', '5', '--time-scale', '36000', '--out', out, '--log-level', 'warn', '--fault', 'never_delivered=0.2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      // A clean drain on SIGTERM exits 0 (the shutdown helper no longer re-raises the signal).
      const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? String(code))));
      for (let i = 0; i < 200 && !stdout.includes('ground truth:'); i++) await new Promise((r) => setTimeout(r, 100));
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      const key = /sandbox\s+Api-Token: (\S+)/.exec(stdout)?.[1];
      expect(url).toBeDefined();
      expect(key).toBeDefined();
      const reg = await request(`${url}/webhooks`, {
        method: 'POST',
        headers: { 'api-token': key!, 'content-type': 'application/json' },
        body: JSON.stringify({ topic: 'order', address: 'http://127.0.0.1:9/unreachable' }),
      });
      expect(reg.statusCode).toBe(201);
      await reg.body.dump();
      let orders: unknown[] = [];
      for (let i = 0; i < 100 && orders.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const res = await request(`${url}/api/v1/orders`, { headers: { 'api-token': key! } });
        orders = ((await res.body.json()) as { orders: unknown[] }).orders;
      }
      expect(orders.length).toBeGreaterThan(0);
      child.kill('SIGTERM');
      expect(await exited).toBe('0');
      const truth = JSON.parse(await readFile(path.join(out, 'ground-truth.json'), 'utf8'));
      expect(truth.seed).toBe('5');
      expect(Array.isArray(truth.discrepancies)).toBe(true);
      expect((await readFile(path.join(out, 'sandbox-statement.camt053.xml'), 'utf8')).startsWith('<?xml')).toBe(true);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await rm(out, { recursive: true, force: true });
    }
  });
});
