import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from 'postgres';
import { runPoll } from '../../src/poller/run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { Loopback, json, makeContext, uuidOf } from '../poller/loopback-provider.js';

/**
 * docs/settings.md, POLL_CONCURRENCY: "pages are written to the ledger in batches (up to 2,000
 * orders a statement, one statement at a time) while fetching goes on" (poller/run.ts
 * WRITE_STATEMENTS). The test reads the number the page states and compares it with what a poll
 * does (the page said "two" after the code went to one).
 */
let database: TestDatabase;
let provider: Loopback | undefined;
beforeAll(async () => {
  database = await createTestDatabase('poll_write_doc');
});
afterAll(async () => {
  await provider?.close();
});

const WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4 };

describe('docs/settings.md on poll write statements', () => {
  it('states the number of write statements a poll keeps in flight', { timeout: 30_000 }, async () => {
    const doc = readFileSync(new URL('../../docs/settings.md', import.meta.url), 'utf8');
    const line = doc.split('\n').find((l) => l.startsWith('| `POLL_CONCURRENCY`')) ?? '';
    const claim = /(\w+) (?:write )?statements? (?:at once|at a time|in flight)/.exec(line);
    const TOTAL = 3000;
    provider = new Loopback((_req, res, url) => {
      const page = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('per_page'));
      const orders = [];
      for (let i = (page - 1) * size; i < Math.min(TOTAL, page * size); i += 1) orders.push({ uuid: uuidOf(TOTAL - i), state: 'confirmed', external_reference_id: `R${TOTAL - i}` });
      json(res, 200, { orders });
    });
    const url = await provider.listen();
    // A slow database: every merge statement takes 300 ms more, so pages queue behind it.
    let inFlight = 0;
    let most = 0;
    const real = database.sql;
    const slow = new Proxy(real, {
      apply(target, thisArg, args: unknown[]) {
        const strings = args[0] as TemplateStringsArray | undefined;
        if (Array.isArray(strings) && 'raw' in strings && strings.join('').includes('json_to_recordset')) {
          return (async () => {
            inFlight += 1;
            most = Math.max(most, inFlight);
            try {
              await sleep(300);
              return await Reflect.apply(target, thisArg, args);
            } finally {
              inFlight -= 1;
            }
          })();
        }
        return Reflect.apply(target, thisArg, args);
      },
    }) as Sql;
    const { client, ctx } = makeContext(database, url, { POLL_PAGE_SIZE: 50, POLL_CONCURRENCY: 8, RATE_LIMIT_RPS: 500 });
    try {
      const summary = await runPoll({ ...ctx, database: { ...database, sql: slow } }, client);
      expect(summary.status).toBe('complete');
      expect(summary.orders).toBe(TOTAL);
    } finally {
      await client.close();
    }
    expect(claim, 'the POLL_CONCURRENCY row names a number of statements').not.toBeNull();
    const documented = WORDS[claim![1]!.toLowerCase()] ?? Number(claim![1]);
    expect(most, `docs/settings.md says "${claim![0]}"; most write statements in flight during the poll`).toBe(documented);
  });
});
