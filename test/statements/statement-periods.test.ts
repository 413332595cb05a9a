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
const day = (date: string, cents: bigint): GenDay => ({ date, entries: [{ cents, direction: 'credit', ref: `R-${date}-${cents}`, e2e: null, txs: null }] });

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
    await pass(d, new Date('2026-03-09T12:00:00Z'), { days: 1, accounts: [account] });
    expect(await findings(d, 'payout_not_on_statement')).toEqual([]);
    // Tuesday's statement arrives without the credit: now the window is covered and the payout missing.
    await importStatement(d, 'sandbox', Buffer.from(camt({ account, opening: 1_000n, days: [] }, [[day('2026-03-03', 3_000n)]], 'tue')), 'tue.camt053.xml');
    await pass(d, new Date('2026-03-09T12:00:00Z'), { days: 1, accounts: [account] });
    expect((await findings(d, 'payout_not_on_statement')).map((f) => f.sepa_reference)).toEqual(['PO2026030300000001']);
  });

  it("judges a payout on the payout account's statements only: another account's statement covers nothing", async () => {
    const merchant = 'DE38760260000012345678';
    const savings = 'DE89370400440532013000';
    await payoutEvent(d, { sepa: 'PO2026031000000001', cents: 40_000n, eventTime: '2026-03-10T06:00:00.000000000Z' });
    await payoutEvent(d, { sepa: 'PO2026030900000001', cents: 10_000n, eventTime: '2026-03-09T06:00:00.000000000Z' });
    const now = new Date('2026-03-20T12:00:00Z');
    const missing = async () => (await findings(d, 'payout_not_on_statement')).filter((f) => f.status === 'open').map((f) => f.sepa_reference);
    // The savings account's statements cover 9 to 12 March; no payout credit was ever seen, no setting: nothing can be said.
    const savingsDays = ['2026-03-09', '2026-03-10', '2026-03-11', '2026-03-12'].map((date) => day(date, 500n));
    await importStatement(d, 'sandbox', Buffer.from(camt({ account: savings, opening: 0n, days: [] }, [savingsDays], 'sav')), 'savings.xml');
    await pass(d, now, { days: 1, ibans: [] });
    expect(await missing()).toEqual([]);
    // The merchant account's 9 March brings the other payout's credit: payouts go to that account, whose statements do not cover 10-11 March yet.
    const credit: GenDay = { date: '2026-03-09', entries: [{ cents: 10_000n, direction: 'credit', ref: 'M-1', e2e: 'PO2026030900000001', txs: null }] };
    await importStatement(d, 'sandbox', Buffer.from(camt({ account: merchant, opening: 0n, days: [] }, [[credit]], 'm1')), 'merchant-09.xml');
    await pass(d, now, { days: 1, ibans: [] });
    expect(await missing()).toEqual([]);
    // The setting names the savings account as the payout account: its statements cover the window.
    await pass(d, now, { days: 1, ibans: [], accounts: [savings] });
    expect(await missing()).toEqual(['PO2026031000000001']);
    await pass(d, now, { days: 1, ibans: [] });
    expect(await missing()).toEqual([]);
    // The merchant's 10 and 11 March arrive without the credit: now it is missing.
    await importStatement(d, 'sandbox', Buffer.from(camt({ account: merchant, opening: 10_000n, days: [] }, [[day('2026-03-10', 700n), day('2026-03-11', 800n)]], 'm2')), 'merchant-10.xml');
    await pass(d, now, { days: 1, ibans: [] });
    expect(await missing()).toEqual(['PO2026031000000001']);
  });
});
