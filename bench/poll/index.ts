/**
 * Poll benchmark (issue 3): a full poll of 100,000 orders (1,000 pages of 100; quick: 10,000)
 * against a provider that allows exactly 500 requests in any 1 s window (sliding window, 429 with
 * Retry-After in whole seconds). The provider runs in a child process; each poll runs in a child
 * process of its own so its peak RSS is measured alone.
 *
 * Runs, each on a freshly migrated ledger database:
 *  - fetch_only_500: the pager and client alone at RATE_LIMIT_RPS=500 (no database writes);
 *  - poll_500:       a full poll at RATE_LIMIT_RPS=500;
 *  - poll_450:       a full poll at the default 450;
 *  - shared_450:     the same while another client on the same IP spends 250/s of the budget.
 * The baseline is the floor: the fewest requests a scan can make (pages + 1 empty page) / 500 s.
 * Issue 26 asks that the poll take no longer than the fetch alone: fetch_only_500 and poll_500 run
 * alternately, ROUNDS times, each figure the median round, and poll_over_fetch_only is the median
 * of the rounds' ratios, judged against 1.0.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchDatabase, median, postgresCpuSeconds } from '../support.js';

const API_KEY = 'bench-key-not-secret';
const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));

interface Child {
  process: ChildProcess;
  next(): Promise<Record<string, unknown>>;
}

function spawn(script: string, env: Record<string, string>): Child {
  const child = fork(here(script), [], { env: { ...process.env, ...env }, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const queue: Record<string, unknown>[] = [];
  const waiters: ((m: Record<string, unknown>) => void)[] = [];
  child.on('message', (m: Record<string, unknown>) => {
    const waiter = waiters.shift();
    if (waiter) waiter(m);
    else queue.push(m);
  });
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const queued = queue.shift();
      if (queued) return resolve(queued);
      const timer = setTimeout(() => reject(new Error(`${script}: no answer within 10 minutes`)), 600_000);
      timer.unref();
      const onExit = (code: number | null) => reject(new Error(`${script} exited with ${code}`));
      child.once('exit', onExit);
      waiters.push((m) => {
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve(m);
      });
    });
  return { process: child, next };
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
const ROUNDS = 3;
const POLL_OVER_FETCH_ONLY_TARGET = 1.0;

/** The run whose elapsed time is the median of the rounds (as support.ts median: the upper middle one for an even count). */
function medianRun<T extends { elapsed_s: number }>(runs: readonly T[]): T {
  return [...runs].sort((a, b) => a.elapsed_s - b.elapsed_s)[Math.floor(runs.length / 2)]!;
}

export async function runPollBench(opts: { quick?: boolean } = {}): Promise<Record<string, unknown>> {
  const orders = opts.quick ? 10_000 : 100_000;
  const pageSize = 100;
  const minimumRequests = Math.ceil(orders / pageSize) + (orders % pageSize === 0 ? 1 : 0);
  const floorSeconds = minimumRequests / 500;
  const provider = spawn('provider.ts', { BENCH_ORDERS: String(orders), BENCH_PAGE_SIZE: String(pageSize), BENCH_API_KEY: API_KEY });
  const { url } = (await provider.next()) as { url: string };
  const database = await benchDatabase('poll');
  const ask = async (cmd: string) => {
    provider.process.send({ cmd });
    return provider.next();
  };

  const poll = async (rps: number, mode: 'fetch-only' | 'poll', competitorRps = 0) => {
    await database.reset();
    // Let the provider's 1 s window empty between runs.
    await new Promise((r) => setTimeout(r, 1200));
    await ask('reset');
    let competitor: Child | undefined;
    if (competitorRps > 0) {
      competitor = spawn('competitor.ts', { BENCH_PROVIDER_URL: url, BENCH_COMPETITOR_RPS: String(competitorRps), BENCH_API_KEY: API_KEY });
      await competitor.next();
      await new Promise((r) => setTimeout(r, 1000)); // the competitor is at full pace before the poll begins
    }
    const postgresCpuBefore = postgresCpuSeconds();
    const runner = spawn('runner.ts', {
      PROVIDER_BASE_URL: url,
      PROVIDER_API_KEY: API_KEY,
      DATABASE_URL: database.url,
      RATE_LIMIT_RPS: String(rps),
      POLL_PAGE_SIZE: String(pageSize),
      LOG_LEVEL: 'silent',
      BENCH_MODE: mode,
    });
    const { result } = (await runner.next()) as { result: Record<string, number | string> };
    const postgresCpuAfter = postgresCpuSeconds();
    let competitorCounts: Record<string, unknown> | undefined;
    if (competitor) {
      competitor.process.send({ cmd: 'stop' });
      competitorCounts = await competitor.next();
      competitor.process.kill();
    }
    const { stats } = (await ask('stats')) as { stats: Record<string, number> };
    const elapsed = Number(result.elapsedMs) / 1000;
    return {
      status: result.status,
      orders: result.orders,
      requests: result.requests,
      probes: result.probes,
      refetches: result.refetches,
      elapsed_s: round(elapsed),
      floor_s: round(floorSeconds),
      ratio_to_floor: round(elapsed / floorSeconds),
      floor_at_own_rate_s: round(minimumRequests / rps),
      poller_429s: result.throttled,
      provider_429s_total: stats.throttled,
      retries: result.retries,
      poller_cpu_s: round(Number(result.cpuS), 2),
      provider_cpu_s: round(Number(stats.cpuS), 2),
      ...(postgresCpuBefore !== undefined && postgresCpuAfter !== undefined ? { postgres_cpu_s: round(postgresCpuAfter - postgresCpuBefore, 2) } : {}),
      peak_rss_mb: round(Number(result.peakRssMb), 1),
      start_rss_mb: round(Number(result.startRssMb), 1),
      ...(competitorCounts ? { competitor: competitorCounts } : {}),
    };
  };

  try {
    const fetchOnlyRuns: Awaited<ReturnType<typeof poll>>[] = [];
    const pollRuns: Awaited<ReturnType<typeof poll>>[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      fetchOnlyRuns.push(await poll(500, 'fetch-only'));
      pollRuns.push(await poll(500, 'poll'));
    }
    const fetchOnly500 = medianRun(fetchOnlyRuns);
    const poll500 = medianRun(pollRuns);
    const ratios = pollRuns.map((run, i) => round(run.elapsed_s / fetchOnlyRuns[i]!.elapsed_s));
    const pollOverFetchOnly = round(median(ratios));
    const poll450 = await poll(450, 'poll');
    const shared450 = await poll(450, 'poll', 250);
    return {
      orders,
      pages: Math.ceil(orders / pageSize),
      provider_limit: '500 requests in any 1 s window; Retry-After in whole seconds',
      fetch_only_500: fetchOnly500,
      poll_500: poll500,
      poll_450: poll450,
      shared_450_with_competitor_250: shared450,
      ratio: poll500.ratio_to_floor,
      poll_over_fetch_only: {
        median: pollOverFetchOnly,
        rounds: ratios,
        fetch_only_s: fetchOnlyRuns.map((run) => run.elapsed_s),
        poll_s: pollRuns.map((run) => run.elapsed_s),
      },
      targets: {
        poll_over_fetch_only: { target: `<= ${POLL_OVER_FETCH_ONLY_TARGET}`, value: pollOverFetchOnly, met: pollOverFetchOnly <= POLL_OVER_FETCH_ONLY_TARGET },
      },
    };
  } finally {
    provider.process.send({ cmd: 'close' });
    await database.drop().catch(() => undefined);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  const figures = await runPollBench({ quick });
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  const { stopBenchServer } = await import('../support.js');
  await stopBenchServer();
}
