import { afterAll, expect, it } from 'vitest';
import { createSqlClient, databaseOver, type Database } from '../../src/db/database.js';
import { createTestDatabase } from '../helpers/database.js';

/**
 * The ledger's clients run with TimeZone UTC whatever the server's or the database's default
 * (database.ts says which SQL would otherwise compute in the server's zone): the pool's
 * connections and the dedicated lock sessions (sessions.ts) alike.
 */
const clients: Database[] = [];
afterAll(async () => {
  for (const c of clients) await c.close();
});

it('the pool and the dedicated sessions use TimeZone UTC on a database whose default is Europe/Berlin', async () => {
  const bare = await createTestDatabase('session_tz', { migrate: false });
  await bare.sql.unsafe(`alter database "${bare.name}" set timezone to 'Europe/Berlin'`);
  const db = databaseOver(createSqlClient(bare.url, { poolMax: 2 }));
  clients.push(db);
  const [pool] = await db.sql<{ tz: string; month_later: string }[]>`
    select current_setting('TimeZone') as tz, ('2026-03-01T00:00:00Z'::timestamptz + interval '1 month')::text as month_later`;
  expect(pool).toEqual({ tz: 'UTC', month_later: '2026-04-01 00:00:00+00' });
  const { session } = db.sessions.take();
  try {
    const [own] = await session<{ tz: string }[]>`select current_setting('TimeZone') as tz`;
    expect(own!.tz).toBe('UTC');
  } finally {
    await db.sessions.discard(session);
  }
});
