import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runPoll } from '../../src/poller/run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { Loopback, makeContext, uuidOf } from './loopback-provider.js';

/**
 * Promise: "bad responses from the API (malformed JSON, unexpected fields, ...) give a clear log
 * line and a retry or a failed run, never a crash or a silent drop"; "no order the API listed is
 * skipped or lost".
 *
 * An order whose state or reference holds what Postgres text refuses (a NUL character) would fail
 * its page's whole batch on every poll; it is stored with U+FFFD in its place, and a log line names
 * the order and the field.
 */
let database: TestDatabase;
let provider: Loopback | undefined;
beforeAll(async () => {
  database = await createTestDatabase('pl_poison_order');
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

describe('an order whose text the ledger cannot store', () => {
  it('does not keep its page-mates out of the ledger on every poll, and the error names the order', async () => {
    const TOTAL = 300;
    const BAD = 150; // on page 2 of 3 (100 per page)
    provider = new Loopback((_req, res, url) => {
      const n = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('per_page'));
      const parts: string[] = [];
      for (let i = TOTAL - (n - 1) * size; i > Math.max(0, TOTAL - n * size); i -= 1) {
        // Valid JSON: "\u0000" is an allowed escape; the provider's merchant reference carries it.
        const ref = i === BAD ? 'R150\\u0000' : `R${i}`;
        parts.push(`{"uuid":"${uuidOf(i)}","state":"confirmed","external_reference_id":"${ref}"}`);
      }
      const body = `{"orders":[${parts.join(',')}]}`;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    });
    const url = await provider.listen();
    const { client, ctx, lines } = makeContext(database, url, { POLL_PAGE_SIZE: 100 });
    try {
      const first = await runPoll(ctx, client);
      const second = await runPoll(ctx, client);
      const [counted] = await database.sql<{ n: number }[]>`select count(*)::int as n from order_snapshots`;
      const n = counted!.n;
      // Every order but (at most) the odd one is in the ledger after two polls ...
      expect(n, `orders in the ledger after two polls (runs: ${first.status} "${first.error}", ${second.status})`).toBeGreaterThanOrEqual(TOTAL - 1);
      // ... and the failure names the order (or the field) the ledger refused.
      expect(lines.join('')).toContain(uuidOf(BAD));
    } finally {
      await client.close();
    }
  });
});
