import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { importStatement } from '../../src/statements/import.js';
import { findings, MERCHANT_IBAN, pass, payoutEvent, PROVIDER_IBAN } from '../statements/fixtures.js';

/**
 * payout_not_on_statement needs the payout accounts' statements to "cover the whole window"
 * [event_time, event_time + PAYOUT_SETTLEMENT_DAYS] (payout-common.ts payoutWindows). A statement
 * of bank days (MT940, CSV, a CAMT.053 FrDt/ToDt or FrDtTm/ToDtTm without an offset) is stored with
 * its days as UTC midnights (camt-xml.ts instantOf), and the window, an instant, is compared with
 * them. A German bank's day 2026-06-08 ends at 2026-06-08T22:00:00Z (CEST); the rule takes it to
 * cover up to 2026-06-09T00:00:00Z. A credit the bank books at 00:30 on 9 June (local), 22:30Z on
 * 8 June, inside the window, is on the statement of 9 June, which is not imported yet; the rule
 * nevertheless says the statements cover the window and calls the payout not credited.
 *
 * The payout: announced 2026-06-05T23:50Z (01:50 on 6 June in Berlin), deadline 2026-06-08T23:50Z.
 * The statements: the account's days 5 to 8 June. The pass: 2026-06-08T23:55Z.
 */
const EVENT_TIME = '2026-06-05T23:50:00.000000000Z';
const PASS_AT = new Date('2026-06-08T23:55:00Z');
const SEPA = 'PO2026060500000001';

/** A CAMT.053 of the merchant account with one unrelated credit (the account receives payouts: PAYOUT_ACCOUNT_IBANS). */
const camt = (period: string) => Buffer.from(`<?xml version="1.0"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><GrpHdr><MsgId>M-1</MsgId><CreDtTm>2026-06-09T06:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S-JUNE-5-8</Id><FrToDt>${period}</FrToDt>
<Acct><Id><IBAN>${MERCHANT_IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Ntry><Amt Ccy="EUR">12.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-06-06</Dt></BookgDt><AcctSvcrRef>E1</AcctSvcrRef>
<NtryDtls><TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs><RltdPties><Dbtr><Nm>Customer</Nm></Dbtr></RltdPties><RmtInf><Ustrd>Rent</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
</Stmt></BkToCstmrStmt></Document>`);

/** The same days as the project's own CSV columns, a line on the first and on the last day. */
const csv = Buffer.from(`${[
  'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban',
  `C1,2026-06-05,2026-06-05,10.00,EUR,CRDT,Customer,DE89370400440532013000,,Rent,${MERCHANT_IBAN}`,
  `C2,2026-06-08,2026-06-08,11.00,EUR,CRDT,Customer,DE89370400440532013000,,Rent,${MERCHANT_IBAN}`,
].join('\r\n')}\r\n`);

describe('payout_not_on_statement and statements of bank-local days', () => {
  const cases: [string, Buffer, string][] = [
    ['a CAMT.053 of dates (FrDt/ToDt)', camt('<FrDt>2026-06-05</FrDt><ToDt>2026-06-08</ToDt>'), 'june.xml'],
    ['a CAMT.053 of local date-times without an offset', camt('<FrDtTm>2026-06-05T00:00:00</FrDtTm><ToDtTm>2026-06-08T23:59:59</ToDtTm>'), 'june-times.xml'],
    ['a CSV export (first to last booking day)', csv, 'june.csv'],
  ];
  for (const [name, file, fileName] of cases) {
    it(`does not claim ${name} covers the last hours of a window that fall on the next bank day`, async () => {
      const d = await createTestDatabase('time_window_local_days', { poolMax: 4 });
      await payoutEvent(d, { sepa: SEPA, cents: 250_000n, eventTime: EVENT_TIME });
      const imported = await importStatement(d, 'sandbox', file, fileName);
      expect(imported.linesNew, 'the statement imports').toBeGreaterThan(0);
      await pass(d, PASS_AT, { accounts: [MERCHANT_IBAN], ibans: [PROVIDER_IBAN] });
      const found = await d.sql<{ details: string }[]>`select details from discrepancies where kind = 'payout_not_on_statement'`;
      // The statements end with 8 June as the bank counts days: in Berlin 2026-06-08T22:00:00Z. The
      // last 110 minutes of the window (until 2026-06-08T23:50Z, 01:50 on 9 June there) are on the
      // statement of 9 June, which holds the credit if the bank booked it then.
      expect(found.map((f) => f.details), 'a payout called not credited although the statements imported do not reach its deadline in the bank\'s day').toEqual([]);
      expect(await findings(d, 'payout_not_on_statement')).toEqual([]);
      await d.drop();
    });
  }

  it('(control) still flags the payout once the statements reach 9 June, the day the window ends in the bank\'s zone', async () => {
    const d = await createTestDatabase('time_window_local_days_ctl', { poolMax: 4 });
    await payoutEvent(d, { sepa: SEPA, cents: 250_000n, eventTime: EVENT_TIME });
    const through9 = Buffer.from(`${[
      'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban',
      `C1,2026-06-05,2026-06-05,10.00,EUR,CRDT,Customer,DE89370400440532013000,,Rent,${MERCHANT_IBAN}`,
      `C3,2026-06-09,2026-06-09,11.00,EUR,CRDT,Customer,DE89370400440532013000,,Rent,${MERCHANT_IBAN}`,
    ].join('\r\n')}\r\n`);
    await importStatement(d, 'sandbox', through9, 'june-5-9.csv');
    // The day after: 9 June has ended in every zone from UTC-12 to UTC+14.
    await pass(d, new Date('2026-06-10T12:00:00Z'), { accounts: [MERCHANT_IBAN], ibans: [PROVIDER_IBAN] });
    expect((await findings(d, 'payout_not_on_statement')).map((f) => f.sepa_reference)).toEqual([SEPA]);
    await d.drop();
  });
});
