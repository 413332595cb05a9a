/**
 * A part against a revision (`npm run bench -- --against=REV --only=poll,reconcile`): the part's
 * own benchmark as this checkout has it and as the revision has it (bench/revision.ts), each run
 * whole in its own process (`bench/run.ts --only=<part>` in its tree, which prints the part's
 * figures), alternately, which goes first alternating, `rounds` times. Each part names its headline
 * figures and which way is better; a headline's ratio per round is oriented so that above 1 this
 * checkout did better, and it is judged by the geometric mean of the rounds' ratios with its 95 %
 * bootstrap interval. Ingest has its own comparison, both receivers live at once
 * (bench/ingest/against.ts). Parts whose figures differ in shape between the two revisions cannot
 * be compared: the headline that one side lacks is reported missing.
 */
import { spawn } from 'node:child_process';
import { checkoutRevision, currentRevision, repoRoot } from './revision.js';
import { geometricMeanInterval, median } from './support.js';

type Better = 'lower' | 'higher';
type Figures = Record<string, unknown>;

const at = (figures: Figures, ...keys: string[]): number | undefined => {
  let value: unknown = figures;
  for (const key of keys) value = (value as Record<string, unknown> | undefined)?.[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};

/**
 * What each run of a part is read for, per part: its headline figures (judged) and, beside them,
 * details that say where a difference comes from (kept per run, not judged).
 */
const DETAILS: Record<string, (f: Figures) => unknown> = {
  reconcile: (f) => {
    const large = f.large as Figures | undefined;
    return { large: large?.full_pass_step_ms, largeNoChange: large?.no_change_pass_step_ms, small: (f.small as Figures | undefined)?.full_pass_step_ms };
  },
};

/** Each comparable part's headline figures, read from its figures, and which way is better. */
const HEADLINES: Record<string, Record<string, { better: Better; read: (f: Figures) => number | undefined }>> = {
  poll: {
    'poll at 500/s, s': { better: 'lower', read: (f) => at(f, 'poll_500', 'elapsed_s') },
    'poll at 500/s over the fetch alone': { better: 'lower', read: (f) => at(f, 'poll_over_fetch_only', 'median') },
    'poll at 450/s, s': { better: 'lower', read: (f) => at(f, 'poll_450', 'elapsed_s') },
    'poll beside a competitor, s': { better: 'lower', read: (f) => at(f, 'shared_450_with_competitor_250', 'elapsed_s') },
  },
  statements: {
    'CAMT.053 import, lines/s': { better: 'higher', read: (f) => at(f, 'camt053', String(f.entries), 'import_lines_per_second') },
    'MT940 import, lines/s': { better: 'higher', read: (f) => at(f, 'mt940', String(f.entries), 'import_lines_per_second') },
    'CAMT.053 import / saxes': { better: 'higher', read: (f) => at(f, 'camt053', String(f.entries), 'import_vs_baseline') },
  },
  reconcile: {
    'full pass, large, ms': { better: 'lower', read: (f) => at(f, 'large', 'full_pass_ms') },
    'no-change pass, large, ms': { better: 'lower', read: (f) => at(f, 'large', 'no_change_pass_ms') },
    'full pass, small, ms': { better: 'lower', read: (f) => at(f, 'small', 'full_pass_ms') },
  },
};

export const COMPARABLE_PARTS = Object.keys(HEADLINES);

/** Runs `bench/run.ts --only=<part>` in `tree` and returns the part's figures as it printed them. */
async function runPart(tree: string, part: string, quick: boolean): Promise<Figures> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', `--only=${part}`, ...(quick ? ['--quick'] : [])], {
    cwd: tree,
    // BENCH_RESULTS=none: this checkout's child leaves bench/results/latest.json to the parent.
    env: { ...process.env, BENCH_RESULTS: 'none' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  // Printed as `<part>: ` and the figures' JSON, indented by two, so its closing brace is the first
  // one at the start of a line.
  const start = out.indexOf(`${part}: {`);
  const end = out.indexOf('\n}', start);
  if (code !== 0 || start < 0 || end < 0) throw new Error(`bench ${part} in ${tree} exited ${code} without its figures`);
  const figures = JSON.parse(out.slice(start + part.length + 2, end + 2)) as Figures;
  if (typeof figures.error === 'string') throw new Error(`bench ${part} in ${tree} failed: ${figures.error}`);
  return figures;
}

export async function runPartAgainst(part: string, opts: { against: string; at?: string; rounds?: number; quick?: boolean }): Promise<Record<string, unknown>> {
  const headlines = HEADLINES[part];
  if (!headlines) throw new Error(`no comparison for ${part}; one of ingest, ${COMPARABLE_PARTS.join(', ')}`);
  const revision = await checkoutRevision(opts.against);
  // `at`: another revision measured in this checkout's place (to isolate one change: --at=C --against=C^).
  const at = opts.at === undefined ? undefined : await checkoutRevision(opts.at);
  const trees = { current: at?.dir ?? repoRoot, against: revision.dir };
  const rounds = opts.rounds ?? 3;
  const runs: Record<keyof typeof trees, Figures[]> = { current: [], against: [] };
  for (let round = 0; round < rounds; round += 1) {
    const order: (keyof typeof trees)[] = round % 2 === 0 ? ['current', 'against'] : ['against', 'current'];
    for (const side of order) {
      runs[side].push(await runPart(trees[side], part, Boolean(opts.quick)));
      process.stderr.write(`  ${part} round ${round + 1}/${rounds}: ${side} done\n`);
    }
  }
  const compared = Object.fromEntries(
    Object.entries(headlines).map(([name, { better, read }]) => {
      const current = runs.current.map(read);
      const against = runs.against.map(read);
      if (current.some((v) => v === undefined) || against.some((v) => v === undefined)) return [name, { better, current, against, missing: true }];
      const perRound = (current as number[]).map((c, i) => {
        const a = (against as number[])[i] as number;
        return Math.round((better === 'lower' ? a / c : c / a) * 1000) / 1000;
      });
      const interval = geometricMeanInterval(perRound);
      return [name, { better, current, against, currentMedian: median(current as number[]), againstMedian: median(against as number[]), ratioPerRound: perRound, ratio: interval.mean, ratioInterval95: [interval.low, interval.high] }];
    }),
  );
  return {
    part: `${part}-against`,
    quick: Boolean(opts.quick),
    description: `bench ${part} of ${opts.at ?? 'this checkout'} against that of ${opts.against}, each run whole in its own process, ${rounds} rounds alternating which goes first; per headline, the geometric mean of the rounds' ratios with its 95 % bootstrap interval`,
    against: { rev: opts.against, sha: revision.sha, subject: revision.subject },
    current: at ? { rev: at.rev, sha: at.sha, subject: at.subject } : currentRevision(),
    rounds,
    note: 'ratio above 1: this checkout (or `at`) did better (lower time or higher rate than the revision)',
    headlines: compared,
    ...(DETAILS[part] ? { detailsPerRound: { current: runs.current.map(DETAILS[part]), against: runs.against.map(DETAILS[part]) } } : {}),
  };
}
