import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { createProviderClient } from '../../src/provider/client.js';
import type { Database } from '../../src/db/database.js';
import { testMetrics } from '../helpers/metrics.js';

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const alertsFile = path.resolve('ops/prometheus/alerts.yml');

describe('ops files', () => {
  it.skipIf(!has('promtool'))('alert rules pass promtool, and a broken rule does not', () => {
    const out = execFileSync('promtool', ['check', 'rules', alertsFile], { encoding: 'utf8' });
    expect(out).toContain('SUCCESS');
    const broken = path.join(mkdtempSync(path.join(tmpdir(), 'rules-')), 'broken.yml');
    writeFileSync(broken, readFileSync(alertsFile, 'utf8').replace('> 0.1', '> > 0.1'));
    expect(spawnSync('promtool', ['check', 'rules', broken]).status).not.toBe(0);
  });

  it('alert rules name only metrics the daemon exports', () => {
    const { registry, metrics } = testMetrics({} as Database);
    const client = createProviderClient(loadConfig({ PROVIDER_BASE_URL: 'http://127.0.0.1:9', PROVIDER_API_KEY: 'k' }), silentLogger(), metrics.provider);
    void client.close();
    const exported = new Set(registry.getMetricsAsArray().map((m) => m.name));
    const used = new Set([...readFileSync(alertsFile, 'utf8').matchAll(/bnpl_recon_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, '')));
    expect(used.size).toBeGreaterThan(5);
    for (const name of used) expect(exported.has(name), name).toBe(true);
  });
});
