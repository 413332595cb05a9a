import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { findings, pass, payoutEvent } from './fixtures.js';
import { camt, type GenDay, type GenStatement } from './generate.js';

/**
 * A file that holds Monday's and Wednesday's statements covers Monday and Wednesday, not Tuesday: a
 * payout due on Tuesday is not "missing from the statements" until Tuesday's statement is imported.
 */
let d: TestDatabase;
useTestDatabase('statement_periods', (database) => (d = database));

const account = 'DE44500105175407324931';
const day = (date: string, cents: bigint): GenDay => ({ date, entries: [{ cents, direction: 'credit', ref: `R-${date}`, e2e: null, txs: null }] });

describe('statement periods', () => {
  it('takes each statement of a file as its own period when deciding payout_not_on_statement', async () => {
    await payoutEvent(d, { sepa: 'PO2026030300000001', cents: 50_000n, eventTime: '2026-03-03T06:00:00.000000000Z' });
    const s: GenStatement = { account, opening: 0n, days: [] };
    // Monday 2 March and Wednesday 4 March, in one file; Tuesday's statement is not here.
    const file = camt(s, [[day('2026-03-02', 1_000n)], [day('2026-03-04', 2_000n)]], 'mon-wed');
    const result = await importStatement(d, 'sandbox', Buffer.from(file), 'mon-wed.camt053.xml');
    expect(result.statements).toBe(2);
    const periods = await d.sql<{ f: string; t: string }[]>`
      select to_char(period_from at time zone 'UTC', 'YYYY-MM-DD') as f, to_char(period_to at time zone 'UTC', 'YYYY-MM-DD') as t
      from statement_periods order by section_index`;
    // A period ends where its last day ends: the next midnight.
    expect(periods).toEqual([{ f: '2026-03-02', t: '2026-03-03' }, { f: '2026-03-04', t: '2026-03-05' }]);
    // The window 03 06:00 .. 04 06:00 is only half covered: nothing can be said yet.
    await pass(d, new Date('2026-03-09T12:00:00Z'), { days: 1 });
    expect(await findings(d, 'payout_not_on_statement')).toEqual([]);
    // Tuesday's statement arrives without the credit: now the window is covered and the payout missing.
    await importStatement(d, 'sandbox', Buffer.from(camt({ account, opening: 1_000n, days: [] }, [[day('2026-03-03', 3_000n)]], 'tue')), 'tue.camt053.xml');
    await pass(d, new Date('2026-03-09T12:00:00Z'), { days: 1 });
    expect((await findings(d, 'payout_not_on_statement')).map((f) => f.sepa_reference)).toEqual(['PO2026030300000001']);
  });
});
