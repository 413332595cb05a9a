import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProviderEnvironment } from '../../src/config/schema.js';
import { importStatement } from '../../src/statements/import.js';
import { parseStatement } from '../../src/statements/detect.js';
import { type ParsedStatement } from '../../src/statements/types.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

// One account's 1 and 2 April 2026 as its bank exports them three ways (test/statements/banks/period-april.*,
// written for this project after the camt.053.001.02 schema, the DFÜ-Abkommen MT940 and a German bank's CSV
// export): CAMT.053 splits the salary batch into its three transfers, MT940 and CSV book it as one line;
// the CSV has no entry-reference column and no end-to-end ids; two equal 4.50 card payments on 2 April.
const file = (name: string) => readFileSync(path.join(import.meta.dirname, 'banks', name));
const ACCOUNT = 'DE75120300001020304050';

type Row = [booking: string, value: string | null, cents: bigint, direction: 'credit' | 'debit', currency: string, e2e: string | null,
  counterpartyIban: string | null, counterpartyName: string | null, remittance: string | null, bankReference: string | null];
const rows = (p: ParsedStatement): Row[] =>
  p.lines.map((l) => [l.bookingDate, l.valueDate, l.amountCents, l.direction, l.currency, l.endToEndId, l.counterpartyIban, l.counterpartyName, l.remittance, l.bankReference]);

const PAYOUT: Row = ['2026-04-01', '2026-04-01', 125000n, 'credit', 'EUR', 'PO2026040100000007', 'DE02120300000000202051', 'BNPL Provider GmbH', 'Auszahlung PO2026040100000007', 'K-0401-2'];
const INVOICE: Row = ['2026-04-02', '2026-04-03', 8990n, 'credit', 'EUR', 'RE-2026-0042', 'DE89370400440532013000', 'Kunde AG', 'Rechnung 2026-0042', 'K-0402-1'];

describe('one period in three formats: the parsers', () => {
  it('CAMT.053: the batch split into its three transfers, each with its own end-to-end id and creditor', () => {
    const p = parseStatement(file('period-april.camt053.xml'));
    expect(p).toMatchObject({ format: 'camt053', accountIban: ACCOUNT, periodFrom: '2026-04-01T00:00:00.000Z', periodTo: '2026-04-03T00:00:00.000Z' });
    expect(rows(p)).toEqual([
      ['2026-04-01', '2026-04-01', 20000n, 'debit', 'EUR', 'LOHN-2026-04-1', 'DE20500502010000123456', 'Anna Becker', 'Gehalt April', 'BTCH-0401/1'],
      ['2026-04-01', '2026-04-01', 20000n, 'debit', 'EUR', 'LOHN-2026-04-2', 'DE89370400440532013000', 'Jonas Weber', 'Gehalt April', 'BTCH-0401/2'],
      ['2026-04-01', '2026-04-01', 20000n, 'debit', 'EUR', 'LOHN-2026-04-3', 'DE44500105175407324931', 'Lena Schulz', 'Gehalt April', 'BTCH-0401/3'],
      PAYOUT,
      ['2026-04-02', '2026-04-02', 450n, 'debit', 'EUR', null, null, null, 'Kartenzahlung Bäckerei Korn', null],
      ['2026-04-02', '2026-04-02', 450n, 'debit', 'EUR', null, null, null, 'Kartenzahlung Bäckerei Korn', null],
      INVOICE,
    ]);
    expect(p.lines.map((l) => l.entryReference ?? l.bankReference)).toEqual(['BTCH-0401', 'BTCH-0401', 'BTCH-0401', 'K-0401-2', null, null, 'K-0402-1']);
  });

  it("MT940: BLZ/account is the CAMT's IBAN, one line for the batch, EREF+/SVWZ+ across full ?2x subfields, ?30/?31 bank code and account", () => {
    const p = parseStatement(file('period-april.sta'));
    expect(p).toMatchObject({ format: 'mt940', accountIban: ACCOUNT, periodFrom: '2026-04-01T00:00:00.000Z', periodTo: '2026-04-03T00:00:00.000Z' });
    expect(p.sections).toHaveLength(2);
    expect(rows(p)).toEqual([
      ['2026-04-01', '2026-04-01', 60000n, 'debit', 'EUR', null, null, null, 'Gehalt April 3 Posten', 'BTCH-0401'],
      PAYOUT,
      ['2026-04-02', '2026-04-02', 450n, 'debit', 'EUR', null, null, null, 'Kartenzahlung Baeckerei Korn', null],
      ['2026-04-02', '2026-04-02', 450n, 'debit', 'EUR', null, null, null, 'Kartenzahlung Baeckerei Korn', null],
      INVOICE,
    ]);
  });

  it('CSV (Windows-1252, German columns): no entry references, no end-to-end ids; the payout reference found in the purpose', () => {
    const p = parseStatement(file('period-april.csv'));
    expect(p).toMatchObject({ format: 'csv', accountIban: ACCOUNT, periodFrom: '2026-04-01T00:00:00.000Z', periodTo: '2026-04-03T00:00:00.000Z' });
    expect(rows(p)).toEqual([
      ['2026-04-01', '2026-04-01', 60000n, 'debit', 'EUR', null, null, null, 'Gehalt April 3 Posten', null],
      ['2026-04-01', '2026-04-01', 125000n, 'credit', 'EUR', null, 'DE02120300000000202051', 'BNPL Provider GmbH', 'Auszahlung PO2026040100000007', null],
      ['2026-04-02', '2026-04-02', 450n, 'debit', 'EUR', null, null, null, 'Kartenzahlung Bäckerei Korn', null],
      ['2026-04-02', '2026-04-02', 450n, 'debit', 'EUR', null, null, null, 'Kartenzahlung Bäckerei Korn', null],
      ['2026-04-02', '2026-04-03', 8990n, 'credit', 'EUR', null, 'DE89370400440532013000', 'Kunde AG', 'Rechnung 2026-0042', null],
    ]);
    expect(p.lines[1]!.sepaReference).toBe('PO2026040100000007');
  });
});

let db: TestDatabase;
useTestDatabase('statements_overlap', (database) => (db = database));

async function ledger(environment: ProviderEnvironment) {
  const lines = await db.sql<{ cents: string; direction: string; e2e: string | null }[]>`
    select amount_cents::text as cents, direction::text, end_to_end_id as e2e from statement_lines
    where environment = ${environment} and account_iban = ${ACCOUNT} order by booking_date, id`;
  const sum = (d: string) => lines.filter((l) => l.direction === d).reduce((s, l) => s + BigInt(l.cents), 0n);
  return { lines, credit: sum('credit'), debit: sum('debit') };
}

// The files' booked totals: credits 1250.00 + 89.90, debits 600.00 + 2 x 4.50.
const CREDIT = 133990n;
const DEBIT = 60900n;

describe('one period in three formats: the import', () => {
  it('CAMT.053 first: the MT940 (the batch as one line) and the CSV (no references) add nothing; each line is accounted for', async () => {
    const camt = await importStatement(db, 'sandbox', file('period-april.camt053.xml'), 'april.xml');
    expect(camt).toMatchObject({ linesRead: 7, linesNew: 7, linesKnown: 0, linesOverlap: 0 });
    const mt = await importStatement(db, 'sandbox', file('period-april.sta'), 'april.sta');
    expect(mt).toMatchObject({ linesRead: 5, linesNew: 0, linesKnown: 0, linesOverlap: 5 });
    const csv = await importStatement(db, 'sandbox', file('period-april.csv'), 'april.csv');
    expect(csv).toMatchObject({ linesRead: 5, linesNew: 0, linesKnown: 0, linesOverlap: 5 });
    const l = await ledger('sandbox');
    // The batch stays three lines (the CAMT's), the two equal card payments stay two.
    expect(l.lines.map((x) => x.cents)).toEqual(['20000', '20000', '20000', '125000', '450', '450', '8990']);
    expect(l.lines.map((x) => x.e2e)).toEqual(['LOHN-2026-04-1', 'LOHN-2026-04-2', 'LOHN-2026-04-3', 'PO2026040100000007', null, null, 'RE-2026-0042']);
    expect({ credit: l.credit, debit: l.debit }).toEqual({ credit: CREDIT, debit: DEBIT });
    // The MT940's batch entry is linked to the CAMT's entry, whose three lines hold it.
    const [batch] = await db.sql<{ lines: number; cents: string; match: string }[]>`
      select count(l.id)::int as lines, sum(l.amount_cents)::text as cents, e.match
      from statement_entries e join bank_statements b on b.id = e.statement_id
      join statement_lines l on l.environment = e.environment and l.entry_key = e.lines_entry_key
      where b.file_name = 'april.sta' and e.amount_cents = 60000 group by e.match`;
    expect(batch).toEqual({ lines: 3, cents: '60000', match: 'reference' });
    const [recorded] = await db.sql<{ lines_new: number; lines_known: number; lines_overlap: number }[]>`
      select lines_new, lines_known, lines_overlap from bank_statements where file_name = 'april.csv'`;
    expect(recorded).toEqual({ lines_new: 0, lines_known: 0, lines_overlap: 5 });
  });

  it('re-importing any of them, in other bytes, adds nothing and says the statement knew its lines', async () => {
    const lf = (name: string) => Buffer.from(file(name).toString('latin1').replace(/\r\n/g, '\n'), 'latin1');
    expect(await importStatement(db, 'sandbox', lf('period-april.sta'), 'april-lf.sta')).toMatchObject({ linesRead: 5, linesNew: 0, linesKnown: 5, linesOverlap: 0 });
    expect(await importStatement(db, 'sandbox', Buffer.from(file('period-april.camt053.xml').toString('utf8').replace(/\n\s*/g, '')), 'april-flat.xml'))
      .toMatchObject({ linesRead: 7, linesNew: 0, linesKnown: 7, linesOverlap: 0 });
    expect(await importStatement(db, 'sandbox', file('period-april.csv'), 'april.csv')).toMatchObject({ alreadyImported: true, linesNew: 0 });
    expect((await ledger('sandbox')).lines).toHaveLength(7);
  });

  it('CSV first, then MT940, then CAMT.053: the period is stored once, as the CSV brought it', async () => {
    expect(await importStatement(db, 'production', file('period-april.csv'), 'april.csv')).toMatchObject({ linesNew: 5, linesOverlap: 0 });
    expect(await importStatement(db, 'production', file('period-april.sta'), 'april.sta')).toMatchObject({ linesNew: 0, linesOverlap: 5 });
    expect(await importStatement(db, 'production', file('period-april.camt053.xml'), 'april.xml')).toMatchObject({ linesNew: 0, linesOverlap: 7 });
    const l = await ledger('production');
    expect(l.lines.map((x) => x.cents)).toEqual(['60000', '125000', '450', '450', '8990']);
    expect({ credit: l.credit, debit: l.debit }).toEqual({ credit: CREDIT, debit: DEBIT });
  });

  it('a later statement of the day with a third card payment adds that one only', async () => {
    // 2 April again as a CAMT.053 whose day holds three 4.50 payments: two are the stored ones.
    const camt = file('period-april.camt053.xml').toString('utf8');
    const card = /<Ntry>\s*<Amt Ccy="EUR">4\.50<\/Amt>[\s\S]*?<\/Ntry>/.exec(camt)![0];
    const third = camt.replace('<Id>2026-04-02-0004</Id>', '<Id>2026-04-02-0005</Id>').replace(card, `${card}${card}`).replace('10730.90</Amt>', '10726.40</Amt>');
    expect(await importStatement(db, 'sandbox', Buffer.from(third), 'april-corrected-day.xml')).toMatchObject({ linesRead: 8, linesNew: 1, linesOverlap: 7 });
    const l = await ledger('sandbox');
    expect(l.lines.filter((x) => x.cents === '450')).toHaveLength(3);
    expect(l.debit).toBe(DEBIT + 450n);
  });

  it('two overlapping files imported at the same moment store the period once (imports take turns)', async () => {
    const other = (t: string) => t.replaceAll('DE75120300001020304050', 'DE20500502010000123456').replaceAll('12030000/1020304050', '50050201/0000123456');
    const camt = Buffer.from(other(file('period-april.camt053.xml').toString('utf8')));
    const mt = Buffer.from(other(file('period-april.sta').toString('latin1')), 'latin1');
    const results = await Promise.all([
      importStatement(db, 'sandbox', camt, 'race.xml'), importStatement(db, 'sandbox', mt, 'race.sta'),
      importStatement(db, 'sandbox', camt, 'race-again.xml'),
    ]);
    expect(results.reduce((n, r) => n + r.linesNew, 0)).toBeGreaterThanOrEqual(5);
    expect(results.filter((r) => r.alreadyImported)).toHaveLength(1);
    const [sums] = await db.sql<{ n: number; credit: string; debit: string }[]>`
      select count(*)::int as n, sum(amount_cents) filter (where direction = 'credit')::text as credit, sum(amount_cents) filter (where direction = 'debit')::text as debit
      from statement_lines where environment = 'sandbox' and account_iban = 'DE20500502010000123456'`;
    expect({ credit: BigInt(sums!.credit), debit: BigInt(sums!.debit) }).toEqual({ credit: CREDIT, debit: DEBIT });
    expect([5, 7]).toContain(sums!.n);
  });
});
