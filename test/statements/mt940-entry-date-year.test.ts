import { describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { parseStatement } from '../../src/statements/detect.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

// A SEPA direct debit refund (PSD2 art. 76: value-dated no later than the day of the original debit)
// booked on 5 January 2026 with the original debit's value date 20 November 2025. MT940 :61: carries
// the value date as YYMMDD and the entry (booking) date as MMDD only: the entry date's year must be
// the one nearest the value date (2026 here), not the value date's year.
const REFUND_2026 = `:20:STARTUMS
:25:50010517/5407324931
:28C:1/1
:60F:C260104EUR500,00
:61:2511200105RD100,00NRTINONREF//R-0105-1
:86:109?00SEPA-RUECKBUCHUNG?20EREF+LS-2025-11-20?21SVWZ+Erstattung Lastschrift?32Versorger AG
:62F:C260105EUR600,00
-`;

// The same account's statement of 5 January 2025, a year earlier: an unrelated 100.00 credit.
const RENT_2025 = `:20:STARTUMS
:25:50010517/5407324931
:28C:1/1
:60F:C250104EUR1000,00
:61:2501050105CR100,00NTRFNONREF
:86:166?00GUTSCHRIFT?20SVWZ+Miete Januar?32Mieter Meier
:62F:C250105EUR1100,00
-`;

describe('MT940 :61: entry date across New Year, more than a month from the value date', () => {
  it('a refund value-dated 20 Nov 2025 and booked 5 Jan 2026 is booked 2026-01-05, and its statement claims no day of 2025', () => {
    const p = parseStatement(Buffer.from(REFUND_2026));
    expect(p.lines.map((l) => [l.valueDate, l.bookingDate, l.direction, l.amountCents])).toEqual([['2025-11-20', '2026-01-05', 'credit', 10000n]]);
    // Booked 2025-01-05, its statement's period would start then: a daily statement claiming a year.
    expect(p.sections[0]!.periodFrom! >= '2025-11-20').toBe(true);
  });

  it('a forward-dated credit (value 15 Feb 2026) booked 30 Dec 2025 is booked 2025-12-30', () => {
    const p = parseStatement(Buffer.from(`:20:STARTUMS
:25:50010517/5407324931
:28C:1/1
:60F:C251229EUR1000,00
:61:2602151230CR100,00NTRFNONREF//B1
:86:166?00GUTSCHRIFT?20SVWZ+Termingeld
:62F:C251230EUR1100,00
-`));
    expect(p.lines[0]!.bookingDate).toBe('2025-12-30');
  });
});

let db: TestDatabase;
useTestDatabase('stmt_mt940_entry_year', (database) => (db = database));

describe('MT940 entry date year: the booking is not lost to an unrelated booking a year earlier', () => {
  it('the 2026 refund is stored as a new booking after the 2025 statement of the same day and amount', async () => {
    const first = await importStatement(db, 'sandbox', Buffer.from(RENT_2025), 'rent-2025.sta');
    expect(first).toMatchObject({ linesNew: 1 });
    const second = await importStatement(db, 'sandbox', Buffer.from(REFUND_2026), 'refund-2026.sta');
    // Dated 2025-01-05, the refund would be taken for the 2025 rent credit (rule 3: same account,
    // day, direction and amount) and not stored.
    expect(second).toMatchObject({ linesRead: 1, linesNew: 1, linesOverlap: 0 });
    const rows = await db.sql<{ booking_date: string; remittance: string | null }[]>`
      select booking_date::text, remittance from statement_lines where environment = 'sandbox' order by id`;
    expect(rows.map((r) => r.booking_date).sort()).toEqual(['2025-01-05', '2026-01-05']);
  });
});
