import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createSqlClient } from '../src/db/database.js';
import { fixedRate, makeDeliveries, maxThroughput, startTarget } from './ingest.js';
import { benchDatabase, percentile } from './support.js';

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

interface RunnerResult {
  examined: number;
  outcomes: Record<string, number>;
  seconds: number;
  deliveriesPerSecond: number;
  startRssMib: number;
  peakRssMib: number;
}

function startRunner(databaseUrl: string): { done: Promise<RunnerResult> } {
  const child = fork(new URL('./reparse-runner.ts', import.meta.url).pathname, [], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    execArgv: ['--import', 'tsx'],
  });
  const done = (async () => {
    const [message] = (await once(child, 'message')) as [RunnerResult];
    await once(child, 'exit');
    return message;
  })();
  return { done };
}

const round = (n: number) => Math.round(n * 100) / 100;

/** Windows of open-loop ingest at `rate` until `until` settles; every request's latency from when it was due. */
async function ingestDuring(url: string, rate: number, until: Promise<unknown>) {
  let finished = false;
  void until.finally(() => (finished = true));
  const windows: { p50Ms: number; p99Ms: number; maxMs: number; failures: number }[] = [];
  while (!finished) {
    const r = await fixedRate(url, makeDeliveries(rate * 5), rate); // 5 s windows
    windows.push({ p50Ms: round(r.p50Ms), p99Ms: round(r.p99Ms), maxMs: round(r.maxMs), failures: r.failures });
  }
  return windows;
}

/**
 * Reparse of N stored deliveries (1,000,000; 100,000 with --quick) in a process of its own
 * (deliveries/s, peak RSS), while the daemon's receiver takes 1,000 signed deliveries/s in open
 * loop; the ingest p99 is measured alone first, then in 5 s windows during the reparse.
 */
export async function runReparseBench(opts: { quick?: boolean } = {}): Promise<Record<string, unknown>> {
  const count = opts.quick ? 100_000 : 1_000_000;
  const rate = 1000;
  const db = await benchDatabase('reparse');
  try {
    const seedStarted = performance.now();
    await seed(db.url, count);
    const seedSeconds = round((performance.now() - seedStarted) / 1000);
    const { url, child } = await startTarget('daemon', db.url);
    try {
      await maxThroughput(url, makeDeliveries(2000), 32); // warm-up
      const alone = await fixedRate(url, makeDeliveries(rate * 10), rate);
      const runner = startRunner(db.url);
      const windows = await ingestDuring(url, rate, runner.done);
      const reparse = await runner.done;
      const p99s = windows.map((w) => w.p99Ms).sort((a, b) => a - b);
      return {
        description: `reparse of ${count.toLocaleString('en')} stored invalid_shape payouts (numeric amounts, 1 % retries) in its own process, while the receiver takes ${rate}/s signed order deliveries in open loop`,
        seededDeliveries: count,
        seedSeconds,
        reparse,
        ingestAlone: { rate, p50Ms: round(alone.p50Ms), p99Ms: round(alone.p99Ms), maxMs: round(alone.maxMs), failures: alone.failures },
        ingestDuringReparse: { rate, windows, worstWindowP99Ms: p99s.at(-1), medianWindowP99Ms: percentile(p99s, 0.5) },
        targets: { ingestP99MsDuringReparse: 50 },
      };
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  } finally {
    await db.drop();
  }
}
