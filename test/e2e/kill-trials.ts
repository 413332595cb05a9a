import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import type { Sql } from 'postgres';
import { computeSignature } from '../../src/webhooks/signature.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { cleanEnv, spawnCli } from './cli.js';
import { checkLedger } from './fault-load.js';

/**
 * SIGKILL trials: a daemon (`bnpl-recon start`, a real process) takes signed deliveries from
 * concurrent senders, some of them retries of deliveries already acknowledged, and is killed with
 * SIGKILL at a random moment; the next trial restarts it on the same database. Afterwards the
 * ledger is checked against what was acknowledged. Used by test/e2e/kill-trials.test.ts (a few
 * trials) and `npm run soak` (bench/soak/run.ts, minutes of them).
 */
export interface KillTrialOptions {
  databaseUrl: string;
  /** the ledger, to check it after the trials */
  sql: Sql;
  trials?: number;
  /** stop starting trials after this (ms since the start) */
  untilMs?: number;
  senders?: number;
  /** a trial's load runs this long (uniform random) before the kill */
  killAfterMs?: [number, number];
  /** deliveries of one trial that are retries of acknowledged ones */
  retryShare?: number;
  onTrial?: (trial: TrialFigures) => void;
}

export interface TrialFigures {
  trial: number;
  acknowledged: number;
  startMs: number;
  longestAckMs: number;
  peakRssMb: number;
}

export interface KillTrialReport {
  trials: number;
  kills: number;
  /** 2xx answers received (new deliveries and retries) */
  acknowledged: number;
  /** distinct events acknowledged at least once */
  acknowledgedEvents: number;
  /** acknowledged deliveries not in the ledger, plus acknowledged events without an applied delivery */
  lost: number;
  /** events with more than one applied delivery */
  appliedTwice: number;
  /** applied parsed deliveries without their typed row */
  missingTypedRows: number;
  longestAckMs: number;
  longestStartMs: number;
  peakRssMb: number;
  elapsedSeconds: number;
}

const SECRET = 'whsec_kill_trials_secret';

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

export async function runKillTrials(options: KillTrialOptions): Promise<KillTrialReport> {
  const started = performance.now();
  const senders = options.senders ?? 8;
  const [killMin, killMax] = options.killAfterMs ?? [300, 1500];
  const retryShare = options.retryShare ?? 0.1;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bnpl-kill-trials-'));
  const env = cleanEnv({
    DATABASE_URL: options.databaseUrl,
    RECON_DATA_DIR: dataDir,
    PORT: '0',
    METRICS_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    PROVIDER_ENV: 'sandbox',
    WEBHOOK_SECRET: SECRET,
    RECONCILE_SCHEDULE: '0 0 1 1 *',
    POLL_SCHEDULE: '0 0 1 1 *',
    // `start` wants a provider; nothing listens there (port 9, discard): these trials are about the receiver.
    PROVIDER_BASE_URL: 'http://127.0.0.1:9',
    PROVIDER_API_KEY: 'kill-trials-unused-key',
    DB_POOL_MAX: '4',
  });
  const ackedIds: number[] = [];
  const ackedBodies: string[] = [];
  const ackedEvents = new Set<number>();
  let next = 1;
  const report: KillTrialReport = {
    trials: 0, kills: 0, acknowledged: 0, acknowledgedEvents: 0, lost: 0, appliedTwice: 0, missingTypedRows: 0,
    longestAckMs: 0, longestStartMs: 0, peakRssMb: 0, elapsedSeconds: 0,
  };
  const more = () => (options.trials === undefined || report.trials < options.trials) && (options.untilMs === undefined || performance.now() - started < options.untilMs);

  while (more()) {
    const trial: TrialFigures = { trial: report.trials + 1, acknowledged: 0, startMs: 0, longestAckMs: 0, peakRssMb: 0 };
    const spawnedAt = performance.now();
    const daemon = spawnCli(['start'], env);
    try {
      const running = await daemon.waitForLog('bnpl-recon running', 60_000);
      trial.startMs = performance.now() - spawnedAt;
      const url = `${String(running.url)}/webhooks`;
      let killed = false;
      const sampler = setInterval(() => (trial.peakRssMb = Math.max(trial.peakRssMb, rssMb(daemon.pid))), 50);
      const send = async () => {
        while (!killed) {
          const retry = ackedBodies.length > 0 && Math.random() < retryShare;
          const n = retry ? -1 : next++;
          const body = retry ? ackedBodies[Math.floor(Math.random() * ackedBodies.length)]! : JSON.stringify(samplePayload('order/confirmed', n));
          const sentAt = performance.now();
          try {
            const response = await request(url, {
              method: 'POST',
              body,
              headers: { 'content-type': 'application/json', 'x-service-signature': computeSignature(Buffer.from(body), SECRET) },
            });
            const text = await response.body.text();
            if (response.statusCode !== 200) continue;
            const ms = performance.now() - sentAt;
            trial.longestAckMs = Math.max(trial.longestAckMs, ms);
            trial.acknowledged += 1;
            ackedIds.push(Number((JSON.parse(text) as { delivery_id: number }).delivery_id));
            if (!retry) {
              ackedBodies.push(body);
              ackedEvents.add(n);
            }
          } catch {
            // The daemon was killed under this request: its outcome is unknown, as for the provider.
            return;
          }
        }
      };
      const load = Array.from({ length: senders }, () => send());
      await new Promise((r) => setTimeout(r, killMin + Math.random() * (killMax - killMin)));
      killed = true;
      daemon.kill();
      await daemon.exited;
      clearInterval(sampler);
      await Promise.all(load);
      report.kills += 1;
    } finally {
      daemon.kill();
      await daemon.exited;
    }
    report.trials += 1;
    report.acknowledged += trial.acknowledged;
    report.longestAckMs = Math.max(report.longestAckMs, trial.longestAckMs);
    report.longestStartMs = Math.max(report.longestStartMs, trial.startMs);
    report.peakRssMb = Math.max(report.peakRssMb, trial.peakRssMb);
    options.onTrial?.(trial);
  }

  rmSync(dataDir, { recursive: true, force: true });
  const check = await checkLedger(options.sql, ackedIds);
  report.acknowledgedEvents = ackedEvents.size;
  report.lost = check.lost;
  report.appliedTwice = check.appliedTwice;
  report.missingTypedRows = check.missingTypedRows;
  report.longestAckMs = Math.round(report.longestAckMs);
  report.longestStartMs = Math.round(report.longestStartMs);
  report.peakRssMb = Math.round(report.peakRssMb);
  report.elapsedSeconds = Math.round((performance.now() - started) / 1000);
  return report;
}
