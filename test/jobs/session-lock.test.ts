import { describe, expect, it } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { dedicatedSessions } from '../../src/db/sessions.js';
import { lockKey } from '../../src/jobs/lock-keys.js';
import { tryAcquireSessionLock } from '../../src/jobs/session-lock.js';
import { silentLogger } from '../../src/log/logger.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { startProxy } from '../helpers/tcp-proxy.js';

let shared!: TestDatabase;
useTestDatabase('jobs_session_lock', (database) => (shared = database));

const KEY = lockKey('reconcile', 'sandbox');
const options = { name: 'reconcile', log: silentLogger(), heartbeatMs: 0 };

/** A replica's Database with its own application name, so pg_stat_activity tells its sessions apart. */
function replica(name: string): Database {
  return databaseOver(createSqlClient(shared.url, { poolMax: 2, applicationName: name }));
}

async function backendsOf(name: string): Promise<number[]> {
  const rows = await shared.sql<{ pid: number }[]>`select pid from pg_stat_activity where application_name = ${name} order by pid`;
  return rows.map((row) => row.pid);
}

/** Until `check` holds (test/helpers/wait.ts polls for a defined value). */
const until = (what: string, check: () => Promise<boolean>, ms = 5_000) => waitFor(what, async () => ((await check()) ? true : undefined), ms, 20);

describe('session locks on the database’s dedicated sessions', () => {
  it('takes the next lock on the session the last release gave back, and close ends it', async () => {
    const database = replica('lock-reuse');
    try {
      const first = await tryAcquireSessionLock(database, KEY, options);
      expect(first).toBeDefined();
      await first!.release();
      expect(await backendsOf('lock-reuse')).toEqual([first!.pid]);
      const second = await tryAcquireSessionLock(database, KEY, options);
      expect(second?.pid).toBe(first!.pid);
      await second!.release();
    } finally {
      await database.close();
    }
    await until('the kept session to end', async () => (await backendsOf('lock-reuse')).length === 0);
  });

  it('keeps the lock between replicas: a session turned away is kept too, and the holder’s release lets the other in', async () => {
    const a = replica('lock-a');
    const b = replica('lock-b');
    try {
      const held = await tryAcquireSessionLock(a, KEY, options);
      expect(held).toBeDefined();
      expect(await tryAcquireSessionLock(b, KEY, options)).toBeUndefined();
      const [turnedAway] = await backendsOf('lock-b');
      await held!.release();
      const taken = await tryAcquireSessionLock(b, KEY, options);
      expect(taken?.pid).toBe(turnedAway);
      // A released session holds nothing: a's kept session, reused, is turned away in its turn.
      expect(await tryAcquireSessionLock(a, KEY, options)).toBeUndefined();
      await taken!.release();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('reconnects a kept session the server ended while it was idle', async () => {
    const database = replica('lock-idle-killed');
    try {
      const first = await tryAcquireSessionLock(database, KEY, options);
      await first!.release();
      await shared.sql`select pg_terminate_backend(${first!.pid}::int)`;
      await until('the idle session to end', async () => !(await backendsOf('lock-idle-killed')).includes(first!.pid));
      const second = await tryAcquireSessionLock(database, KEY, options);
      expect(second).toBeDefined();
      expect(second!.pid).not.toBe(first!.pid);
      await second!.release();
    } finally {
      await database.close();
    }
  });

  it('takes the lock on a new session when the kept one fails its query, and fails when a new one does', async () => {
    const database = replica('lock-kept-broken');
    try {
      const { session } = database.sessions.take();
      await session`select 1`;
      database.sessions.give(session);
      // Ended behind the keeper's back: its next query fails at once (CONNECTION_ENDED).
      await session.end();
      const held = await tryAcquireSessionLock(database, KEY, options);
      expect(held).toBeDefined();
      expect(await backendsOf('lock-kept-broken')).toEqual([held!.pid]);
      await held!.release();
    } finally {
      await database.close();
    }
    const unreachable = databaseOver(createSqlClient('postgres://postgres@127.0.0.1:1/none', { poolMax: 1 }));
    try {
      await expect(tryAcquireSessionLock(unreachable, KEY, options)).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await unreachable.close();
    }
  });

  it('ends the session of a lock that was lost instead of giving it back', async () => {
    const database = replica('lock-lost');
    try {
      const held = await tryAcquireSessionLock(database, KEY, { ...options, heartbeatMs: 50 });
      await shared.sql`select pg_terminate_backend(${held!.pid}::int)`;
      await until('the heartbeat to notice', async () => held!.lost.aborted);
      await held!.release();
      // postgres.js would reconnect that client on its next query; ended, it opens nothing.
      const next = await tryAcquireSessionLock(database, KEY, options);
      expect(next).toBeDefined();
      expect(await backendsOf('lock-lost')).toEqual([next!.pid]);
      await next!.release();
    } finally {
      await database.close();
    }
  });

  it('ends a kept session after it sat unused for idleMs, and keeps at most maxKept', async () => {
    const sql = createSqlClient(shared.url, { poolMax: 1, applicationName: 'kept-idle' });
    const sessions = dedicatedSessions(sql, { idleMs: 300, maxKept: 1 });
    try {
      const { session: one } = sessions.take();
      const { session: two } = sessions.take();
      expect(one).not.toBe(two);
      await Promise.all([one`select 1`, two`select 1`]);
      expect(await backendsOf('kept-idle')).toHaveLength(2);
      sessions.give(one);
      sessions.give(two);
      await until('the session over maxKept to end', async () => (await backendsOf('kept-idle')).length === 1);
      const again = sessions.take();
      expect(again.session).toBe(one);
      expect(again.reused).toBe(true);
      sessions.give(one);
      await until('the idle session to end', async () => (await backendsOf('kept-idle')).length === 0, 3_000);
    } finally {
      await sessions.end();
      await sql.end({ timeout: 5 });
    }
  });

  it('ends a session given back after end (a run released during shutdown) or older than its lifetime', async () => {
    const sql = createSqlClient(shared.url, { poolMax: 1, applicationName: 'kept-ended' });
    const aged = dedicatedSessions(sql, { lifetimeMs: 0 });
    const closing = dedicatedSessions(sql);
    try {
      const { session: old } = aged.take();
      await old`select 1`;
      await new Promise((resolve) => setTimeout(resolve, 5));
      aged.give(old);
      await until('the session past its lifetime to end', async () => (await backendsOf('kept-ended')).length === 0);

      const { session: held } = closing.take();
      await held`select 1`;
      await closing.end();
      closing.give(held);
      await until('the session given back after end to end', async () => (await backendsOf('kept-ended')).length === 0);
    } finally {
      await Promise.all([aged.end(), closing.end()]);
      await sql.end({ timeout: 5 });
    }
  });
});

describe('the session-lock heartbeat after a failover leaves its connection half-open', () => {
  it('gives the lock up when a heartbeat gets no answer, within a few heartbeats of another replica taking it (two replicas never both lead)', async () => {
    const proxy = await startProxy(new URL(shared.url));
    const a = databaseOver(createSqlClient(proxy.url, { poolMax: 2, applicationName: 'half-open-a' }));
    const b = replica('half-open-b');
    const pollKey = lockKey('poll', 'sandbox');
    let held: Awaited<ReturnType<typeof tryAcquireSessionLock>>;
    let taken: Awaited<ReturnType<typeof tryAcquireSessionLock>>;
    try {
      held = await tryAcquireSessionLock(a, pollKey, { name: 'poll', log: silentLogger(), heartbeatMs: 200 });
      expect(held).toBeDefined();
      // A few heartbeats on a healthy connection.
      await sleep(600);
      expect(held!.lost.aborted).toBe(false);
      // The failover: A's connection goes silent (no reset reaches it), the server side of the
      // session is gone (the old primary died), and replica B takes the lock.
      proxy.blackhole();
      await shared.sql`select pg_terminate_backend(${held!.pid})`;
      taken = await tryAcquireSessionLock(b, pollKey, { name: 'poll', log: silentLogger(), heartbeatMs: 200 });
      expect(taken, 'replica B takes the lock the dead session held').toBeDefined();
      // 15 heartbeats later (3 s) A must have given up leadership: 15 s is the soak's takeover bound.
      await sleep(3_000);
      const bothLead = !held!.lost.aborted && !taken!.lost.aborted;
      expect(bothLead, 'replica A still believes it holds the poll lock while replica B holds it').toBe(false);
    } finally {
      await proxy.close();
      await Promise.all([held?.release(), taken?.release()]);
      await Promise.all([a.close(1), b.close(1)]);
    }
  });

  it('notices at once, without a heartbeat, that the server ended the lock’s session', async () => {
    const database = replica('lock-ended');
    try {
      const lock = await tryAcquireSessionLock(database, KEY, options);
      expect(lock).toBeDefined();
      await shared.sql`select pg_terminate_backend(${lock!.pid})`;
      await until('the holder to notice its session ended', async () => lock!.lost.aborted);
      expect(String((lock!.lost.reason as Error).message)).toContain('session ended');
      await lock!.release();
    } finally {
      await database.close(1);
    }
  });
});
