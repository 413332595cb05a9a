/**
 * Statements benchmark (issues 12 and 25): a CAMT.053 and an MT940 of 1,000,000 bookings (100,000
 * with --quick; and a tenth of that, to show memory is flat) imported into the ledger, each run in a
 * child process reporting lines per second, peak RSS and CPU, against a baseline in the same round:
 * the same CAMT file through the XML library alone (saxes, no handlers, no database) and the same
 * MT940 split into lines alone. Each round runs the baseline and then the import of every file (a
 * fresh database for each import); `--rounds=N` (default 1) repeats them, and the figures are the
 * medians of the rounds, each round's own beside them. Targets (issue 25): CAMT.053 import at least
 * half the bare saxes parse of the same file (the ratio of each round's pair); MT940 at least
 * 50,000 lines/s; peak RSS flat (at most 1.1x) from the small file to the large.
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
  nodeCpuSeconds: number;
  postgresCpuSeconds: number | null;
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
const CAMT_VS_SAXES_TARGET = 0.5;
const MT940_LINES_PER_SECOND_TARGET = 50_000;
const FLAT_RSS_TARGET = 1.1;
const perSecond = (r: RunnerReport) => Math.round(r.lines / (r.durationMs / 1000));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round3 = (n: number) => Math.round(n * 1000) / 1000;

export async function runStatementsBench(o: { quick?: boolean; rounds?: number }): Promise<Record<string, unknown>> {
  const large = o.quick ? 100_000 : 1_000_000;
  const rounds = o.rounds ?? 1;
  const dir = await mkdtemp(path.join(tmpdir(), 'bnpl-bench-stmt-'));
  const out: Record<string, unknown> = { entries: large, per_statement: PER_STATEMENT, rounds };
  try {
    for (const format of ['camt053', 'mt940'] as const) {
      const sizes = [large / 10, large];
      const files = new Map<number, string>();
      for (const entries of sizes) {
        const file = path.join(dir, `${format}-${entries}.${format === 'camt053' ? 'xml' : 'sta'}`);
        await (format === 'camt053' ? writeCamt : writeMt940)(file, entries, PER_STATEMENT);
        files.set(entries, file);
      }
      const measured = new Map<number, { baseline: RunnerReport; imported: RunnerReport }[]>(sizes.map((s) => [s, []]));
      for (let r = 0; r < rounds; r += 1) {
        for (const entries of sizes) {
          const file = files.get(entries)!;
          const database = await benchDatabase(`stmt_${format}_${entries}`);
          try {
            const baseline = await run(format === 'camt053' ? 'xml' : 'lines', file);
            const imported = await run('import', file, database.url);
            if (imported.lines !== entries || baseline.lines !== entries) throw new Error(`${format}: ${imported.lines} lines imported, ${baseline.lines} in the baseline, of ${entries}`);
            measured.get(entries)!.push({ baseline, imported });
          } finally {
            await database.drop();
          }
        }
      }
      const result: Record<string, unknown> = {};
      for (const entries of sizes) {
        const runs = measured.get(entries)!;
        const ratios = runs.map((m) => round3(perSecond(m.imported) / perSecond(m.baseline)));
        result[String(entries)] = {
          file_mib: Math.round((await stat(files.get(entries)!)).size / 2 ** 20),
          import_seconds: median(runs.map((m) => m.imported.durationMs / 1000)),
          import_lines_per_second: median(runs.map((m) => perSecond(m.imported))),
          import_peak_rss_mib: median(runs.map((m) => m.imported.peakRssMib)),
          import_start_rss_mib: median(runs.map((m) => m.imported.startRssMib)),
          import_node_cpu_seconds: median(runs.map((m) => m.imported.nodeCpuSeconds)),
          import_postgres_cpu_seconds: runs.every((m) => m.imported.postgresCpuSeconds !== null) ? median(runs.map((m) => m.imported.postgresCpuSeconds!)) : null,
          baseline: format === 'camt053' ? 'saxes alone, no handlers, no database' : 'split into lines alone',
          baseline_lines_per_second: median(runs.map((m) => perSecond(m.baseline))),
          baseline_peak_rss_mib: median(runs.map((m) => m.baseline.peakRssMib)),
          import_vs_baseline: median(ratios),
          rounds: runs.map((m, i) => ({ import_lines_per_second: perSecond(m.imported), baseline_lines_per_second: perSecond(m.baseline), import_vs_baseline: ratios[i], import_peak_rss_mib: m.imported.peakRssMib })),
        };
      }
      const small = result[String(large / 10)] as { import_peak_rss_mib: number };
      const big = result[String(large)] as { import_peak_rss_mib: number; import_vs_baseline: number; import_lines_per_second: number };
      const rssRatio = round3(big.import_peak_rss_mib / small.import_peak_rss_mib);
      result.targets = {
        ...(format === 'camt053'
          ? { import_vs_saxes: { target: `>= ${CAMT_VS_SAXES_TARGET}`, at: large, value: big.import_vs_baseline, met: big.import_vs_baseline >= CAMT_VS_SAXES_TARGET } }
          : { import_lines_per_second: { target: `>= ${MT940_LINES_PER_SECOND_TARGET}`, at: large, value: big.import_lines_per_second, met: big.import_lines_per_second >= MT940_LINES_PER_SECOND_TARGET } }),
        peak_rss_flat: {
          target: `<= ${FLAT_RSS_TARGET}x from ${large / 10} to ${large} entries`, small_mib: small.import_peak_rss_mib, large_mib: big.import_peak_rss_mib, ratio: rssRatio,
          met: rssRatio <= FLAT_RSS_TARGET,
        },
      };
      out[format] = result;
      for (const file of files.values()) await rm(file, { force: true });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return out;
}
