import { describe, expect, it } from 'vitest';
import { stagedRows } from '../../src/statements/staged-rows.js';
import type { StatementLine, StatementSection } from '../../src/statements/types.js';

const section = {
  identity: 'mt940|DE89370400440532013000|00042|2026-11-02',
  accountIban: 'DE89370400440532013000',
  periodFrom: null,
  periodTo: null,
  firstWholeDay: '2026-11-02',
  lastWholeDay: '2026-11-02',
  booked: {},
} as unknown as StatementSection;

function line(entryIndex: number, cents: bigint, bankReference: string | null, txIndex = 0): StatementLine {
  return {
    accountIban: 'DE89370400440532013000', bookingDate: '2026-11-02', valueDate: '2026-11-02', amountCents: cents, currency: 'EUR',
    direction: 'credit', counterpartyIban: null, counterpartyName: null, endToEndId: null, instructionId: null, bankReference,
    remittance: null, sepaReference: null, section: 0, entryIndex, txIndex,
  };
}

const days = { first: '2026-11-02', last: '2026-11-02' };
// StagedEntry positions (staged-rows.ts ENTRY_COLUMNS): 6 amount, 7 entry reference, 8 usable reference, 10 lines.
const AMOUNT = 6, REFERENCE = 7, USABLE = 8, LINES = 10;

describe('stagedRows: which entry references the overlap rule may trust', () => {
  it('a reference two entries of equal values share is kept but not usable; a unique one is usable; NONREF is none', () => {
    const { entries } = stagedRows(section, days, [
      line(0, 1500n, 'SHARED'),
      line(1, 1500n, 'SHARED'),
      line(2, 1500n, 'UNIQUE'),
      line(3, 2500n, 'SHARED'), // same reference, another amount: other values
      line(4, 900n, 'nonref'),
      line(5, 900n, null),
    ], 0);
    expect(entries.map((e) => [e[REFERENCE], e[USABLE]])).toEqual([
      ['SHARED', null],
      ['SHARED', null],
      ['UNIQUE', 'UNIQUE'],
      ['SHARED', 'SHARED'],
      [null, null],
      [null, null],
    ]);
  });

  it("a split batch's lines make one entry: the sum of their amounts, judged as one", () => {
    const { entries, lines } = stagedRows(section, days, [
      { ...line(0, 1000n, 'BATCH/1', 0), entryReference: 'BATCH' },
      { ...line(0, 2000n, 'BATCH/2', 1), entryReference: 'BATCH' },
      line(1, 3000n, 'BATCH'),
    ], 10);
    expect(lines.map((l) => l[0])).toEqual([10, 11, 12]);
    expect(entries.map((e) => [e[AMOUNT], e[REFERENCE], e[USABLE], e[LINES]])).toEqual([
      ['3000', 'BATCH', null, 2],
      ['3000', 'BATCH', null, 1],
    ]);
  });
});
