import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';
import { wholeDays } from '../../src/statements/line-key.js';
import { createTestDatabase } from '../helpers/database.js';
import { applyMigrationFiles } from '../helpers/migrations.js';

/**
 * Migration 0028 says it fills first_whole_day/last_whole_day "as the import writes them". For a
 * CAMT.053 whose FrDtTm/ToDtTm carry a UTC offset (German banks write +01:00/+02:00), the import
 * (camt053.ts wholeDays) reads the bank's wall clock, but the stored period_from/period_to were
 * converted to UTC (camt-xml.ts instantOf, the same before 0013): the migration reads them as if
 * they were wall clock in UTC and gets other days.
 */
const camt = (from: string, to: string) => Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>M-${from}</MsgId><CreDtTm>2026-04-03T06:10:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>S-${from}</Id><CreDtTm>2026-04-03T06:10:00</CreDtTm>
      <FrToDt><FrDtTm>${from}</FrDtTm><ToDtTm>${to}</ToDtTm></FrToDt>
      <Acct><Id><IBAN>DE75120300001020304050</IBAN></Id><Ccy>EUR</Ccy></Acct>
      <Ntry>
        <Amt Ccy="EUR">4.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt><Dt>2026-04-02</Dt></BookgDt><ValDt><Dt>2026-04-02</Dt></ValDt>
        <AddtlNtryInf>Kartenzahlung Baeckerei Korn</AddtlNtryInf>
      </Ntry>
    </Stmt>
  </BkToCstmrStmt>
</Document>
`);

const cases = [
  { what: 'a whole day at +02:00 (00:00:00+02:00 to 23:59:59+02:00)', from: '2026-04-02T00:00:00+02:00', to: '2026-04-02T23:59:59+02:00', expectFilled: false },
  // 20:00 local of 1 April (00:00 UTC of 2 April) to 22:00 local of 2 April: no whole day, but the
  // migration claims 2 April whole, so a later statement's bookings of 22:00-24:00 read as repeats.
  { what: 'a period at -04:00 ending 22:00 local (no whole day)', from: '2026-04-01T20:00:00-04:00', to: '2026-04-02T22:00:00-04:00', expectFilled: false },
  { what: 'a whole day without an offset', from: '2026-04-02T00:00:00', to: '2026-04-02T23:59:59', expectFilled: true },
];

describe('migration 0028 on CAMT.053 periods stored before 0013', () => {
  it.each(cases)('fills $what as the import writes it, or leaves it unknown', { timeout: 60_000 }, async ({ from, to, expectFilled }) => {
    const file = camt(from, to);
    const parsed = parseStatement(file);
    const section = parsed.sections[0]!;
    const imported = wholeDays(section);

    const db = await createTestDatabase('migration_0028_periods', { migrate: false, poolMax: 2 });
    await applyMigrationFiles(db, (f) => f < '0013');
    const [s] = await db.sql<{ id: string }[]>`
      insert into bank_statements (environment, file_sha256, file_name, format, account_iban, period_from, period_to, line_count, statement_count)
      values ('sandbox', ${createHash('sha256').update(file).digest('hex')}, 'day.xml', 'camt053', ${parsed.accountIban},
              ${section.periodFrom}::timestamptz, ${section.periodTo}::timestamptz, 0, 1)
      returning id`;
    await db.sql`
      insert into statement_periods (statement_id, section_index, environment, period_from, period_to)
      values (${s!.id}, 0, 'sandbox', ${section.periodFrom}::timestamptz, ${section.periodTo}::timestamptz)`;
    await applyMigrationFiles(db, (f) => f >= '0013');
    const [row] = await db.sql<{ first: string | null; last: string | null }[]>`
      select first_whole_day::text as first, last_whole_day::text as last from statement_periods where statement_id = ${s!.id}`;
    // The import's days, or none where the stored instants no longer say them (an offset's wall
    // clock is lost): never a day the import would not call whole.
    const filled = { first: row!.first, last: row!.last };
    const unknown = { first: null, last: null };
    expect(
      [JSON.stringify({ first: imported.first, last: imported.last }), JSON.stringify(unknown)],
      `period ${from} .. ${to} stored as ${section.periodFrom} .. ${section.periodTo}: migration 0028 filled ${JSON.stringify(filled)}, other whole days than the import writes`,
    ).toContain(JSON.stringify(filled));
    if (expectFilled) expect(filled).toEqual({ first: imported.first, last: imported.last });
  });
});
