import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createSqlClient } from '../../src/db/database.js';
import { fixedRate, makeDeliveries, maxThroughput, startTarget } from '../ingest/index.js';
import { benchDatabase, percentile } from '../support.js';

/**
 * Stored deliveries an older parser left invalid_shape (payout/complete with numeric amounts, 1 %
 * of them retries of another's bytes), written by one set-based statement per 100,000.
 */
async function seed(databaseUrl: string, count: number): Promise<void> {
  const sql = createSqlClient(databaseUrl, { poolMax: 1 });
  try {
    for (let from = 0; from < count; from += 100_000) {
      const to = Math.min(count, from + 100_000) - 1;
      await sql`
        insert into webhook_deliveries (delivery_uuid, environment, received_at, headers, raw_body, signature_valid, topic, parse_status, parse_error, parser_version)
        select gen_random_uuid(), 'sandbox', now() - interval '30 days', '{}'::jsonb,
               convert_to(format('{"topic":"payout/complete","payout_uuid":"%s","sepa_instruction_id":"PO%s","amount_cents":%s,"external_reference_ids":"INV-%s","event_time":"2026-03-02T06:00:00.%sZ"}',
                 -- a version 4 UUID derived from k, so a retry repeats it
                 format('%s-%s-4%s-a%s-%s', substr(m, 1, 8), substr(m, 9, 4), substr(m, 14, 3), substr(m, 18, 3), substr(m, 21, 12)),
                 lpad(k::text, 16, '0'), 1000 + k % 100000, k, lpad(k::text, 9, '0')), 'UTF8'),
               true, 'payout/complete', 'invalid_shape', 'amount_cents: Expected string, received number', 0
        from (select k, md5(k::text) as m from (select case when g % 100 = 99 then g - 1 else g end as k from generate_series(${from}::int, ${to}::int) g) g) s`;
    }
    await sql`vacuum analyze webhook_deliveries`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

/** Busy and total CPU ticks of the whole machine (/proc/stat), to show what else ran in each window. */
function machineTicks(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

interface Window {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  failures: number;
  /** Cores busy on the whole machine during the window (of 2), and the 1-minute load average at its end. */
  machineCoresBusy: number;
  load1: number;
}

/**
 * 5 s windows of open-loop ingest at `rate`, `count` of them or until `until` settles; every
 * latency goes to `all`. With `control`, every other window goes to `control` instead, with
 * `hold()` called before it and `free()` after.
 */
async function ingestWindows(
  url: string, rate: number, all: number[],
  stop: { count?: number; until?: Promise<unknown> },
  control?: { all: number[]; windows: Window[]; hold(): void; free(): void },
): Promise<Window[]> {
  let finished = false;
  void stop.until?.finally(() => (finished = true));
  const windows: Window[] = [];
  const cores = Number(readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm)?.length ?? 1);
  for (let n = 0; !finished && (stop.count === undefined || windows.length < stop.count); n += 1) {
    const isControl = control !== undefined && n % 2 === 1;
    if (isControl) control.hold();
    const deliveries = makeDeliveries(rate * 5);
    const before = machineTicks();
    const r = await fixedRate(url, deliveries, rate, isControl ? control.all : all);
    if (isControl) control.free();
    const after = machineTicks();
    const load1 = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
    const window = {
      p50Ms: round(r.p50Ms), p99Ms: round(r.p99Ms), maxMs: round(r.maxMs), failures: r.failures,
      machineCoresBusy: round(((after.busy - before.busy) / (after.total - before.total)) * cores), load1,
    };
    (isControl ? control.windows : windows).push(window);
    process.stderr.write(`  ${new Date().toISOString()}${isControl ? ' control' : ''} ${JSON.stringify(window)}\n`);
  }
  return windows;
}

/** The overall p99 of a phase's requests, and its worst and median window. */
function summarise(windows: Window[], all: number[]) {
  all.sort((a, b) => a - b);
  const p99s = windows.map((w) => w.p99Ms).sort((a, b) => a - b);
  return {
    requests: all.length, failures: windows.reduce((n, w) => n + w.failures, 0),
    p50Ms: round(percentile(all, 0.5)), p99Ms: round(percentile(all, 0.99)), maxMs: round(all.at(-1) ?? Number.NaN),
    worstWindowP99Ms: p99s.at(-1), medianWindowP99Ms: percentile(p99s, 0.5), windowsOver50Ms: p99s.filter((p) => p > 50).length,
    windows,
  };
}

/** The command's run (`ledger reparse`: runReparse in a process of its own, unpaced, batches of 500), with nothing else running. */
async function commandRun(databaseUrl: string): Promise<Record<string, unknown>> {
  const child = fork(new URL('./runner.ts', import.meta.url).pathname, [], {
    env: { ...process.env, DATABASE_URL: databaseUrl, DUTY: '1' },
    execArgv: ['--import', 'tsx'],
  });
  const [message] = (await once(child, 'message')) as [Record<string, unknown>];
  await once(child, 'exit');
  return message;
}

async function daemonReparse(child: ChildProcess): Promise<Record<string, unknown>> {
  child.send('reparse');
  const [message] = (await once(child, 'message')) as [Record<string, unknown>];
  return message;
}

/**
 * Reparse of N stored deliveries (1,000,000; 100,000 with --quick) by the daemon's automatic job in
 * the daemon's process, beside its receiver taking 1,000 signed deliveries/s in open loop: ingest
 * latency alone before (6 windows of 5 s), during the reparse and alone after (6 more), each
 * phase's overall p99 and its worst window, with the machine's load in each window (the cores are
 * shared). With --reparse-control, every other window during the reparse is a control: the job is
 * made to see the receiver as slow, so it holds back (one batch per 2 s at most), under the same
 * load from the rest of the machine as the windows around it. Then the same ledger seeded again and reparsed by the command, unpaced, alone
 * (deliveries/s, peak RSS of its own process).
 */
export async function runReparseBench(opts: { quick?: boolean; control?: boolean } = {}): Promise<Record<string, unknown>> {
  const count = opts.quick ? 100_000 : 1_000_000;
  const rate = 1000;
  const db = await benchDatabase('reparse');
  try {
    const seedStarted = performance.now();
    await seed(db.url, count);
    const seedSeconds = round((performance.now() - seedStarted) / 1000);
    const { url, child } = await startTarget('daemon', db.url);
    let alone: ReturnType<typeof summarise>;
    let during: ReturnType<typeof summarise>;
    let after: ReturnType<typeof summarise>;
    let held: ReturnType<typeof summarise> | undefined;
    let daemon: Record<string, unknown>;
    try {
      await maxThroughput(url, makeDeliveries(2000), 32); // warm-up
      const aloneLatencies: number[] = [];
      alone = summarise(await ingestWindows(url, rate, aloneLatencies, { count: 6 }), aloneLatencies);
      const reparse = daemonReparse(child);
      const duringLatencies: number[] = [];
      const control = { all: [] as number[], windows: [] as Window[], hold: () => child.send('hold'), free: () => child.send('free') };
      during = summarise(await ingestWindows(url, rate, duringLatencies, { until: reparse }, opts.control ? control : undefined), duringLatencies);
      if (opts.control) held = summarise(control.windows, control.all);
      daemon = await reparse;
      const afterLatencies: number[] = [];
      after = summarise(await ingestWindows(url, rate, afterLatencies, { count: 6 }), afterLatencies);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    await db.reset();
    await seed(db.url, count);
    const command = await commandRun(db.url);
    return {
      description: `reparse of ${count.toLocaleString('en')} stored invalid_shape payouts (numeric amounts, 1 % retries): by the daemon's automatic job in the daemon's process while its receiver takes ${rate}/s signed order deliveries in open loop, then by the command alone`,
      seededDeliveries: count,
      seedSeconds,
      daemonReparse: daemon,
      ingestAlone: { rate, ...alone },
      ingestDuringReparse: { rate, ...during },
      ...(held ? { ingestWhileReparseHeld: { rate, ...held } } : {}),
      ingestAfter: { rate, ...after },
      ratioP99DuringToAlone: round(during.p99Ms / alone.p99Ms),
      commandReparseAlone: command,
      targets: { ingestP99MsDuringReparse: 50 },
    };
  } finally {
    await db.drop();
  }
}
