import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { runSingleton } from '../../src/jobs/singleton.js';
import { abandonStaleRuns, finishRun, startRun } from '../../src/jobs/runs.js';
import { silentLogger } from '../../src/log/logger.js';
import { pollOnce } from '../../src/poller/once.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { Loopback, json, makeContext, uuidOf } from '../poller/loopback-provider.js';

let database: TestDatabase;
let provider: Loopback | undefined;
beforeAll(async () => {
  database = await createTestDatabase('jobs_runs_lost_lock');
});
afterAll(async () => {
  await provider?.close();
});

describe('a poll whose lock session dies mid-run while another replica takes over', () => {
  it('writes nothing to poll_runs after the next leader took the lock: the run records show one leader at a time', { timeout: 60_000 }, async () => {
    provider = new Loopback((_req, res, url) => {
      const n = Number(url.searchParams.get('page'));
      // A slow provider: each page takes 3 s.
      provider!.later(3_000, () => json(res, 200, { orders: n === 1 ? [{ uuid: uuidOf(1), state: 'confirmed', external_reference_id: 'R1' }] : [] }));
    });
    const url = await provider.listen();
    const a = databaseOver(createSqlClient(database.url, { poolMax: 4, applicationName: 'runs-poll-a' }));
    const b = databaseOver(createSqlClient(database.url, { poolMax: 4, applicationName: 'runs-poll-b' }));
    const { client, ctx } = makeContext(database, url, { POLL_LOCK_HEARTBEAT_MS: 1000 });
    try {
      const polling = pollOnce({ ...ctx, database: a }, client);
      const key = lockKey('poll', 'sandbox');
      const lockPid = await waitFor('replica A to hold the poll lock and start its run', async () => {
        const [row] = await database.sql<{ pid: number }[]>`
          select l.pid from pg_locks l join pg_stat_activity s on s.pid = l.pid
          where l.locktype = 'advisory' and l.granted and s.application_name = 'runs-poll-a'
            and ((l.classid::bigint << 32) | l.objid::bigint) = ${key.toString()}`;
        const [run] = await database.sql`select id from poll_runs where status = 'running'`;
        return row && run ? row.pid : undefined;
      }, 10_000, 20);
      const [runA] = await database.sql<{ id: number }[]>`select id::int from poll_runs where status = 'running'`;
      // The failover kills A's lock session; B's next tick takes the lock, closes A's run and starts its own.
      await database.sql`select pg_terminate_backend(${lockPid})`;
      let runB = 0;
      const taking = runSingleton({ database: b, log: silentLogger() }, { lock: 'poll', environment: 'sandbox', heartbeatMs: 0, runs: 'poll_runs' }, async () => {
        runB = await startRun(b.sql, 'poll_runs', 'sandbox', { holder: 'replica-b' });
        // B's run goes on while A notices its loss.
        await sleep(2_500);
      });
      const took = await taking;
      expect(took.skipped, 'replica B takes the poll lock').toBe(false);
      await polling;
      const rows = await database.sql<{ id: number; status: string; error: string | null; started_at: number; finished_at: number }[]>`
        select id::int, status::text, error, extract(epoch from started_at)::float8 * 1000 as started_at, extract(epoch from finished_at)::float8 * 1000 as finished_at from poll_runs where id in (${runA!.id}, ${runB}) order by id`;
      const [recA, recB] = rows;
      expect(
        recA!.finished_at,
        `replica A rewrote its run after B took over: A ${recA!.status} "${recA!.error}" finished ${new Date(recA!.finished_at).toISOString()}, B started ${new Date(recB!.started_at).toISOString()}`,
      ).toBeLessThanOrEqual(recB!.started_at);
    } finally {
      await Promise.all([a.close(1), b.close(1)]);
    }
  });
});

describe('finishRun', () => {
  it('leaves a run the next lock holder closed as that holder recorded it, and says so', async () => {
    // production: the poll above ran in sandbox, whose run records it leaves.
    const sql = database.sql;
    const runA = await startRun(sql, 'poll_runs', 'production', { holder: 'replica-a' });
    // Replica B takes the lock: it closes A's run, then starts its own.
    expect(await abandonStaleRuns(sql, 'poll_runs', 'production')).toBe(1);
    const runB = await startRun(sql, 'poll_runs', 'production', { holder: 'replica-b' });
    // A notices its loss only now, and finishes its run.
    expect(await finishRun(sql, 'poll_runs', runA, 'complete', null, { pages: 3 })).toBe(false);
    const [recA] = await sql<{ status: string; error: string | null; pages: number; after_b: boolean }[]>`
      select a.status::text, a.error, a.pages, a.finished_at > b.started_at as after_b
      from poll_runs a, poll_runs b where a.id = ${runA} and b.id = ${runB}`;
    expect(recA).toEqual({ status: 'aborted', error: 'the polling process ended before the run finished', pages: 0, after_b: false });
    // B's own run, still running, is finished as usual.
    expect(await finishRun(sql, 'poll_runs', runB, 'complete', null)).toBe(true);
  });
});
