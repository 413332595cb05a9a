import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';
import { importStatement } from '../../src/statements/import.js';
import { createTestDatabase } from '../helpers/database.js';
import { applyMigrationFiles } from '../helpers/migrations.js';

/**
 * Statements stored before migration 0013 keep statement_periods rows (0010's backfill, or the
 * import between 0010 and 0013) without first_whole_day/last_whole_day: 0013 adds the columns and
 * backfills account_iban only. The overlap rule (src/statements/overlap.ts dayMatch) takes a stored
 * statement's wholly covered days from those columns, so after the upgrade an old MT940's days no
 * longer count as covered: a statement covering one of its days in part stores the same bookings
 * again (the stored lines no longer add up to the bank's bookings), where today's import of the same
 * two files links them.
 */
const banks = path.join(import.meta.dirname, '..', 'statements', 'banks');
const mt940 = readFileSync(path.join(banks, 'period-april.sta'));
/** A CAMT.053 from noon of 2 April: it covers 2 April in part, and repeats its two card payments (no reference). */
const afternoon = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>APR-02PM</MsgId><CreDtTm>2026-04-03T06:10:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>2026-04-02-PM</Id><CreDtTm>2026-04-03T06:10:00</CreDtTm>
      <FrToDt><FrDtTm>2026-04-02T12:00:00</FrDtTm><ToDtTm>2026-04-02T23:59:59</ToDtTm></FrToDt>
      <Acct><Id><IBAN>DE75120300001020304050</IBAN></Id><Ccy>EUR</Ccy></Acct>
      <Ntry>
        <Amt Ccy="EUR">4.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt><Dt>2026-04-02</Dt></BookgDt><ValDt><Dt>2026-04-02</Dt></ValDt>
        <AddtlNtryInf>Kartenzahlung Baeckerei Korn</AddtlNtryInf>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">4.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt><Dt>2026-04-02</Dt></BookgDt><ValDt><Dt>2026-04-02</Dt></ValDt>
        <AddtlNtryInf>Kartenzahlung Baeckerei Korn</AddtlNtryInf>
      </Ntry>
    </Stmt>
  </BkToCstmrStmt>
</Document>
`);
const olderPositionKey = (identity: string, entryIndex: number, txIndex: number) =>
  createHash('sha256').update(`position\n${identity}\n${entryIndex}\n${txIndex}`).digest('hex');

describe('an MT940 stored before migration 0013, then a statement covering one of its days in part', () => {
  it('links the repeated bookings to the stored ones, as it does when both were imported by this release', { timeout: 60_000 }, async () => {
    // Today's release imports both files.
    const today = await createTestDatabase('whole_days_today', { poolMax: 2 });
    await importStatement(today, 'sandbox', mt940, 'april.sta');
    const expected = await importStatement(today, 'sandbox', afternoon, 'april-02-pm.xml');
    expect(expected, 'this release links them (control)').toMatchObject({ linesNew: 0, linesOverlap: 2 });

    // The MT940 as the import between migrations 0010 and 0013 stored it, then the upgrade.
    const upgraded = await createTestDatabase('whole_days_upgraded', { migrate: false, poolMax: 2 });
    await applyMigrationFiles(upgraded, (f) => f < '0013');
    const parsed = parseStatement(mt940);
    const [s] = await upgraded.sql<{ id: string }[]>`
      insert into bank_statements (environment, file_sha256, file_name, format, account_iban, period_from, period_to, line_count, statement_count)
      values ('sandbox', ${createHash('sha256').update(mt940).digest('hex')}, 'april.sta', 'mt940', ${parsed.accountIban},
              ${parsed.sections[0]!.periodFrom}::timestamptz, ${parsed.sections.at(-1)!.periodTo}::timestamptz, ${parsed.lines.length}, ${parsed.sections.length})
      returning id`;
    for (const [index, section] of parsed.sections.entries()) {
      await upgraded.sql`
        insert into statement_periods (statement_id, section_index, environment, period_from, period_to)
        values (${s!.id}, ${index}, 'sandbox', ${section.periodFrom}::timestamptz, ${section.periodTo}::timestamptz)`;
    }
    for (const [i, l] of parsed.lines.entries()) {
      const section = parsed.sections[l.section]!;
      await upgraded.sql`
        insert into statement_lines (environment, statement_id, line_key, position_key, entry_index, tx_index, account_iban, booking_date,
                                     value_date, amount_cents, currency, direction, counterparty_iban, counterparty_name, end_to_end_id,
                                     bank_reference, remittance, sepa_reference)
        values ('sandbox', ${s!.id}, ${`old-key-${i}`}, ${olderPositionKey(section.identity, l.entryIndex, l.txIndex)}, ${l.entryIndex}, ${l.txIndex},
                ${l.accountIban}, ${l.bookingDate}, ${l.valueDate}, ${l.amountCents.toString()}, ${l.currency}, ${l.direction}, ${l.counterpartyIban},
                ${l.counterpartyName}, ${l.endToEndId}, ${l.bankReference}, ${l.remittance}, ${l.sepaReference})`;
    }
    await applyMigrationFiles(upgraded, (f) => f >= '0013');

    const after = await importStatement(upgraded, 'sandbox', afternoon, 'april-02-pm.xml');
    const [lines] = await upgraded.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where booking_date = '2026-04-02' and amount_cents = 450`;
    expect({ linesNew: after.linesNew, linesOverlap: after.linesOverlap, storedCardPayments: lines!.n }, 'the upgraded ledger stored the afternoon\'s card payments a second time')
      .toEqual({ linesNew: 0, linesOverlap: 2, storedCardPayments: 2 });
  });
});
