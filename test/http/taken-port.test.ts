import { describe, expect, it } from 'vitest';
import { startHttpServer } from '../../src/http/server.js';
import { startMetricsServer } from '../../src/http/metrics.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { silentLogger } from '../../src/log/logger.js';
import { describeTallies } from '../../src/commands/demo-summary.js';

describe('a port that is taken', () => {
  it('names the setting it came from (PORT, METRICS_PORT), not only EADDRINUSE', async () => {
    const log = silentLogger();
    const first = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'first', routes: [] });
    try {
      await expect(startHttpServer({ host: '127.0.0.1', port: first.port, log, name: 'receiver and operator API', routes: [], portSetting: 'PORT' }))
        .rejects.toThrow(`receiver and operator API: port ${first.port} on 127.0.0.1 is already in use (EADDRINUSE): set PORT to a free port`);
      await expect(startMetricsServer(createRegistry({ defaultMetrics: false }), { host: '127.0.0.1', port: first.port, log }))
        .rejects.toThrow(/set METRICS_PORT to a free port/);
    } finally {
      await first.close();
    }
  });
});

describe("the demo's advice", () => {
  it('names the demo ledger, so the command works after the demo ended', () => {
    const lines = describeTallies([{ kind: 'orphan_webhook', injected: 1, found: 3 }], 10, '/srv/data/demo');
    expect(lines.join('\n')).toContain('RECON_DATA_DIR=/srv/data/demo npx bnpl-recon report discrepancies --status all --kind orphan_webhook');
  });
});
