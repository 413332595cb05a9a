import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';
import { wholeDays } from '../../src/statements/line-key.js';
import { freshRows, stagedRows } from '../../src/statements/staged-rows.js';
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

/** COPY text rows back to fields (db/copy.ts's escapes undone; \N is null). */
function copiedRows(chunks: readonly Buffer[]): (string | null)[][] {
  const text = Buffer.concat(chunks).toString('utf8');
  return text
    .split('\n')
    .slice(0, -1)
    .map((row) => row.split('\t').map((f) => (f === '\\N' ? null : f.replace(/\\(.)/g, (_, c: string) => ({ t: '\t', n: '\n', r: '\r' })[c] ?? c))));
}

describe('freshRows: a statement stored whole is copied as the rules would store it', () => {
  const files = readdirSync(path.join(import.meta.dirname, 'banks')).filter((f) => !f.endsWith('.csv'));
  it.each(files)('%s: its COPY rows hold stagedRows\' entries and lines, its own days and indexes', (name) => {
    const parsed = parseStatement(readFileSync(path.join(import.meta.dirname, 'banks', name)), { acceptUnbalanced: true });
    parsed.sections.forEach((s, i) => {
      const lines = parsed.lines.filter((l) => l.section === i);
      const staged = stagedRows(s, wholeDays(s), lines, 0);
      const fresh = freshRows(s, lines, 'sandbox', 77);
      expect(copiedRows(fresh.lines)).toEqual(
        staged.lines.map(([, position, key, entryIndex, txIndex, ...rest]) => ['sandbox', '77', position, position, key, String(entryIndex), String(txIndex), ...rest]),
      );
      expect(copiedRows(fresh.entries)).toEqual(
        staged.entries.map(([key, , account, date, currency, direction, cents, reference]) => ['sandbox', key, '77', account, date, currency, direction, cents, reference, key, 'new']),
      );
      expect(fresh.entryIndexes).toEqual(staged.entries.map((e) => e[1]));
      const pairs = [...new Set(staged.entries.filter((e) => e[2] !== null).map((e) => `${e[2]} ${e[3]}`))];
      expect(fresh.days.accounts.map((a, k) => `${a} ${fresh.days.dates[k]}`)).toEqual(pairs);
    });
    expect(parsed.lines.length).toBeGreaterThan(0);
  });

  it("takes each entry's reference as stagedRows does: NONREF is none, a split batch's is the entry's", () => {
    const lines = [
      line(0, 1500n, 'NONREF'),
      line(1, 900n, 'nonref'),
      line(2, 900n, null),
      { ...line(3, 1000n, 'BATCH/1', 0), entryReference: 'BATCH' },
      { ...line(3, 2000n, 'BATCH/2', 1), entryReference: 'BATCH' },
    ];
    expect(copiedRows(freshRows(section, lines, 'sandbox', 5).entries).map((e) => [e[7], e[8]])).toEqual([
      ['1500', null],
      ['900', null],
      ['900', null],
      ['3000', 'BATCH'],
    ]);
  });

  it('escapes what would end a field or a row', () => {
    const odd = { ...line(0, 100n, 'R\\1'), remittance: 'a\tb\nc\rd\\e', counterpartyName: '\\N' };
    const [row] = copiedRows(freshRows(section, [odd], 'sandbox', 1).lines);
    expect(row![17]).toBe('a\tb\nc\rd\\e');
    expect(row![14]).toBe('\\N');
    expect(row![16]).toBe('R\\1');
  });
});
