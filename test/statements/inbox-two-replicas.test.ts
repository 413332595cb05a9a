import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startStatementInbox, type StatementInbox } from '../../src/statements/inbox.js';
import { startPayoutReportInbox } from '../../src/payout-import/inbox.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';

/**
 * Two replicas sharing RECON_DATA_DIR (the ReadWriteMany claim of ops/kubernetes, docs/operating.md:
 * "any replica's mount of the claim; the first to scan imports it") and one ledger. Each replica's
 * inbox is the real startFileInbox on the real file system, both started at the same moment, as two
 * pods of a fresh Deployment are (runAtStart: each scans at once). No mocks.
 */
interface Line { msg: string; level: number; [key: string]: unknown }

let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase('inbox_two_replicas');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-replicas-inbox-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function replicaLog(lines: Line[]) {
  return pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
}

const errorsOf = (lines: Line[]) => lines.filter((l) => l.level >= 50).map((l) => `${l.msg}: ${(l.err as { message?: string } | undefined)?.message ?? String(l.reason ?? '')}`);

type Kind = 'statement' | 'payout';

/** Two replicas' inboxes of `kind` on `dataDir`, started together; their start scans and one scan each on demand. */
async function twoReplicas(kind: Kind, dataDir: string): Promise<{ rejected: string[]; errors: string[] }> {
  const config = loadConfig({ RECON_DATA_DIR: dataDir, PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url });
  const shutdown = new Shutdown(silentLogger(), 5000);
  const lines: Line[][] = [[], []];
  const inboxes: StatementInbox<unknown>[] = lines.map((l) =>
    kind === 'statement'
      ? startStatementInbox({ config, log: replicaLog(l), database: db, shutdown, metrics: testMetrics(db).metrics }, { intervalMs: 3_600_000, settleMs: 0 })
      : startPayoutReportInbox({ config, log: replicaLog(l), database: db, shutdown }, { intervalMs: 3_600_000, settleMs: 0 }),
  );
  try {
    // runNow is queued behind each replica's start scan: once it settles, both scans are done.
    const scans = await Promise.allSettled(inboxes.map((i) => i.runNow()));
    return {
      rejected: scans.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error).message)] : [])),
      errors: lines.flatMap((l, i) => errorsOf(l).map((e) => `replica ${i + 1}: ${e}`)),
    };
  } finally {
    await Promise.all(inboxes.map((i) => i.stop()));
  }
}

describe('two replicas starting together on a fresh shared data directory', () => {
  // Each trial is a fresh RECON_DATA_DIR: both replicas find inbox/imported and inbox/failed missing
  // and create them (statements/inbox.ts ensureFolder: lstat, then mkdir without `recursive`).
  for (const kind of ['statement', 'payout'] as const) {
    it(`fail no ${kind} inbox scan creating the inbox's imported/ and failed/ folders (30 fresh directories)`, async () => {
      const failures: string[] = [];
      for (let trial = 0; trial < 30; trial += 1) {
        const { rejected, errors } = await twoReplicas(kind, path.join(root, `fresh-${kind}-${trial}`));
        failures.push(...rejected.map((r) => `trial ${trial}: scan rejected: ${r}`), ...errors.map((e) => `trial ${trial}: ${e}`));
      }
      expect(failures, 'a replica\'s scan failed because the other replica created a subfolder first (EEXIST)').toEqual([]);
    });
  }
});
