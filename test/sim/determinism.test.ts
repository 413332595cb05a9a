import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_RATES } from '../../sim/options.js';
import { startSimulator, type Simulator } from '../../sim/simulator.js';
import { DAY_MS, HOUR_MS } from '../../sim/time.js';

/** Everything a seed must reproduce: planned bodies, signatures, due times, variants, ground truth, statements. */
async function fingerprint(seed: string, steps: number[]): Promise<{ planned: string; size: number; truth: string; statements: string[]; apiKeys: string }> {
  const sim: Simulator = await startSimulator({ seed, faults: DEFAULT_FAULT_RATES });
  const dir = await mkdtemp(path.join(tmpdir(), 'sim-det-'));
  try {
    for (const ms of steps) await sim.advance(ms);
    // Environments are independent worlds: compare each one's own sequence.
    const planned = [...sim.plannedDeliveries()]
      .sort((x, y) => (x.env === y.env ? x.seq - y.seq : x.env < y.env ? -1 : 1))
      .map((d) => `${d.env} ${d.dueAt} ${d.variant} ${d.signedWith} ${d.signature} ${d.eventKey} ${d.body.toString('base64')}`)
      .join('\n');
    const digest = createHash('sha256').update(planned).digest('hex');
    const files = await sim.writeStatements(dir);
    const statements = await Promise.all(files.map((f) => readFile(f, 'utf8')));
    return { planned: digest, size: planned.length, truth: JSON.stringify(sim.groundTruth()), statements, apiKeys: JSON.stringify([sim.apiKeys, sim.secrets]) };
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('a seed reproduces the business', () => {
  it('byte for byte, however the time was advanced', async () => {
    const a = await fingerprint('det-7', [2 * DAY_MS]);
    const b = await fingerprint('det-7', [DAY_MS, 6 * HOUR_MS, 18 * HOUR_MS]);
    expect(a.size).toBeGreaterThan(10_000);
    expect(b.planned).toBe(a.planned);
    expect(b.truth).toBe(a.truth);
    expect(b.statements).toEqual(a.statements);
    expect(b.apiKeys).toBe(a.apiKeys);
    expect(JSON.parse(a.truth).discrepancies.length).toBeGreaterThan(0);
  });

  it('and another seed gives another business', async () => {
    const a = await fingerprint('det-7', [DAY_MS]);
    const c = await fingerprint('det-8', [DAY_MS]);
    expect(c.planned).not.toBe(a.planned);
    expect(c.apiKeys).not.toBe(a.apiKeys);
  });
});
