import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileChangedError, importParsed, importStatement, importStatementSource } from '../../src/statements/import.js';
import { parseStatement } from '../../src/statements/detect.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

const file = (name: string) => readFileSync(path.join(import.meta.dirname, 'banks', name));
const text = (name: string) => file(name).toString('latin1');
const bytes = (t: string) => Buffer.from(t, 'latin1');

let db: TestDatabase;
useTestDatabase('statements_identity', (database) => (db = database));

async function stored(account: string) {
  const [r] = await db.sql<{ n: number; credit: string; debit: string }[]>`
    select count(*)::int as n, coalesce(sum(amount_cents) filter (where direction = 'credit'), 0)::text as credit,
           coalesce(sum(amount_cents) filter (where direction = 'debit'), 0)::text as debit
    from statement_lines where account_iban = ${account}`;
  return r!;
}

describe('line identity', () => {
  it('keeps equal bookings of one statement apart: two card payments, two standing orders under one reference, a split batch', async () => {
    const r = await importStatement(db, 'sandbox', file('camt053-ch.xml'), 'ch.xml');
    expect(r).toMatchObject({ statements: 2, linesRead: 10, linesNew: 10 });
    expect(await stored('CH9300762011623852957')).toEqual({ n: 10, credit: '400000', debit: '35550' });
  });

  it('adds nothing when the same statement comes again in other bytes (LF instead of CRLF, another envelope)', async () => {
    const first = await importStatement(db, 'sandbox', file('deutsche.sta'), 'deutsche.sta');
    expect(first).toMatchObject({ statements: 2, linesRead: 7, linesNew: 7 });
    const again = await importStatement(db, 'sandbox', bytes(text('deutsche.sta').replace(/\r\n/g, '\n').replace('\x1a', '\n')), 'deutsche-lf.sta');
    expect(again).toMatchObject({ alreadyImported: false, linesRead: 7, linesNew: 0 });
    expect(await stored('DE44500105175407324931')).toEqual({ n: 7, credit: '25123', debit: '27799' });
  });

  it('recognises the CAMT.053 of a day already imported as MT940 (BLZ/account and IBAN are one account)', async () => {
    const r = await importStatement(db, 'sandbox', file('camt053-de.xml'), 'camt053-de.xml');
    expect(r).toMatchObject({ format: 'camt053', linesRead: 2, linesNew: 0 });
    expect((await stored('DE44500105175407324931')).n).toBe(7);
  });

  it('adds from an overlapping statement only the bookings of days no earlier statement held (no bank references: the n-th equal booking of a day)', async () => {
    const daily = text('rabobank.sta').split(':20:940S140103')[0]!;
    expect(await importStatement(db, 'sandbox', bytes(daily), 'rabo-0102.sta')).toMatchObject({ linesRead: 2, linesNew: 2 });
    expect(await importStatement(db, 'sandbox', file('rabobank.sta'), 'rabo.sta')).toMatchObject({ linesRead: 3, linesNew: 1 });
    expect(await stored('NL44RABO0123456789')).toEqual({ n: 3, credit: '10000', debit: '6225' });
  });

  it('merges a day two statements cover only in part by references alone; a whole-day statement of it holds both', async () => {
    // The afternoon of 3 March with another 4.50 card payment: not provably the morning's one, so it stays.
    const morning = text('camt053-ch.xml').replace(/<Stmt>[\s\S]*?<\/Stmt>\s*<Stmt>/, '<Stmt>');
    const afternoon = morning.replace('CH-2026-03-03-AM', 'CH-2026-03-03-PM').replace('T00:00:00+01:00', 'T12:00:00+01:00').replace('T12:00:00+01:00</ToDtTm>', 'T23:59:59+01:00</ToDtTm>');
    expect(await importStatement(db, 'sandbox', bytes(afternoon), 'ch-0303-pm.xml')).toMatchObject({ linesRead: 1, linesNew: 1, linesKnown: 0, linesOverlap: 0 });
    expect((await stored('CH9300762011623852957')).n).toBe(11);
    // The whole day's statement holds every booking of the day: its two card payments are those two.
    const entry = '<Ntry><Amt Ccy="CHF">4.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2026-03-03</Dt></BookgDt><AddtlNtryInf>Kartenzahlung Kaffee</AddtlNtryInf></Ntry>';
    const day = morning.replace('CH-2026-03-03-AM', 'CH-2026-03-03').replace('T12:00:00+01:00</ToDtTm>', 'T23:59:59+01:00</ToDtTm>')
      .replace('13644.50</Amt>', '13640.00</Amt>').replace(entry, `${entry}${entry}`);
    expect(await importStatement(db, 'sandbox', bytes(day), 'ch-0303.xml')).toMatchObject({ linesRead: 2, linesNew: 0, linesKnown: 0, linesOverlap: 2 });
    expect(await stored('CH9300762011623852957')).toEqual({ n: 11, credit: '400000', debit: '36000' });
  });

  it('refuses a statement whose identity was imported with other bookings, and writes nothing of it', async () => {
    // Same account, number and balances, two amounts changed so that it still balances.
    const changed = text('rabobank.sta').replace('C000000000100,00N541', 'C000000000101,00N541').replace('D000000000050,25N102', 'D000000000051,25N102');
    await expect(importStatement(db, 'sandbox', bytes(changed), 'rabo-corrected.sta')).rejects.toThrow(
      /statement 1 of the file was imported before \(from rabo-0102\.sta\) with a different booking at entry 1/,
    );
    const [n] = await db.sql<{ n: number }[]>`select count(*)::int as n from bank_statements where file_name = 'rabo-corrected.sta'`;
    expect(n!.n).toBe(0);
  });

  it('refuses, before committing, lines that do not add up to the booked entries (a parser that lost part of a batch)', async () => {
    const parsed = parseStatement(file('ing.sta'));
    const lost = { ...parsed, lines: parsed.lines.slice(1) };
    await expect(importParsed(db, 'sandbox', lost, 'f'.repeat(64), 'ing-lost.sta')).rejects.toThrow(
      /statement 1 of the file: the stored lines do not add up to the booked entries: credits EUR booked 3\.13, stored 1\.57 \(difference 1\.56\)/,
    );
    expect((await stored('NL69INGB0123456789')).n).toBe(0);
    expect(await importStatement(db, 'sandbox', file('ing.sta'), 'ing.sta')).toMatchObject({ linesNew: 3 });
  });

  it('refuses a file that changes between its two reads (still being written), writing nothing', async () => {
    let reads = 0;
    const growing = async function* () {
      reads += 1;
      yield file('volksbank.sta');
      if (reads > 1) yield Buffer.from('\r\n');
    };
    await expect(importStatementSource(db, 'sandbox', growing, 'growing.sta')).rejects.toBeInstanceOf(FileChangedError);
    expect((await stored('DE38760260000012345678')).n).toBe(0);
  });
});
