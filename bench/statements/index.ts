/**
 * Statements benchmark (issue 12): a CAMT.053 and an MT940 of 1,000,000 bookings (100,000 with
 * --quick; and a tenth of that, to show memory is flat) imported into the ledger, each run in a
 * child process reporting lines per second and peak RSS, against a baseline in the same run: the
 * same CAMT file through the XML library alone (saxes, no handlers, no database) and the same MT940
 * split into lines alone.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDatabase } from '../support.js';
import { writeCamt, writeMt940 } from './files.js';

interface RunnerReport {
  durationMs: number;
  lines: number;
  startRssMib: number;
  peakRssMib: number;
}

function run(mode: 'import' | 'xml' | 'lines', file: string, databaseUrl = ''): Promise<RunnerReport> {
  const child = fork(fileURLToPath(new URL('./runner.ts', import.meta.url)), [], {
    env: { ...process.env, FILE: file, MODE: mode, DATABASE_URL: databaseUrl },
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let report: RunnerReport | undefined;
    child.on('message', (m: RunnerReport) => {
      report = m;
    });
    child.on('error', reject);
    child.on('exit', (code) => (report && code === 0 ? resolve(report) : reject(new Error(`statements-runner ${mode} exited with ${code}`))));
  });
}

const PER_STATEMENT = 4000;
const perSecond = (r: RunnerReport) => Math.round(r.lines / (r.durationMs / 1000));

export async function runStatementsBench(o: { quick?: boolean }): Promise<Record<string, unknown>> {
  const large = o.quick ? 100_000 : 1_000_000;
  const dir = await mkdtemp(path.join(tmpdir(), 'bnpl-bench-stmt-'));
  const out: Record<string, unknown> = { entries: large, per_statement: PER_STATEMENT };
  try {
    for (const format of ['camt053', 'mt940'] as const) {
      const result: Record<string, unknown> = {};
      for (const entries of [large / 10, large]) {
        const file = path.join(dir, `${format}-${entries}.${format === 'camt053' ? 'xml' : 'sta'}`);
        await (format === 'camt053' ? writeCamt : writeMt940)(file, entries, PER_STATEMENT);
        const database = await benchDatabase(`stmt_${format}_${entries}`);
        try {
          const baseline = await run(format === 'camt053' ? 'xml' : 'lines', file);
          const imported = await run('import', file, database.url);
          if (imported.lines !== entries || baseline.lines !== entries) throw new Error(`${format}: ${imported.lines} lines imported, ${baseline.lines} in the baseline, of ${entries}`);
          result[String(entries)] = {
            file_mib: Math.round((await stat(file)).size / 2 ** 20),
            import_seconds: imported.durationMs / 1000,
            import_lines_per_second: perSecond(imported),
            import_peak_rss_mib: imported.peakRssMib,
            import_start_rss_mib: imported.startRssMib,
            baseline: format === 'camt053' ? 'saxes alone, no handlers, no database' : 'split into lines alone',
            baseline_lines_per_second: perSecond(baseline),
            baseline_peak_rss_mib: baseline.peakRssMib,
            import_vs_baseline: Number((perSecond(imported) / perSecond(baseline)).toFixed(3)),
          };
        } finally {
          await database.drop();
          await rm(file, { force: true });
        }
      }
      out[format] = result;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return out;
}
