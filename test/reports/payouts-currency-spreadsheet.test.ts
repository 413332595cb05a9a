import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { call, startOperatorServer } from '../http/operator-harness.js';
import { readFods } from '../web/libreoffice.js';
import { toFods } from '../reports/awkward-ledger.js';
import { importStatement } from '../../src/statements/import.js';
import { payoutsSource, PAYOUT_COLUMNS } from '../../src/reports/payouts.js';
import { fetchAll } from '../../src/reports/source.js';
import { discrepancySource } from '../../src/reports/discrepancies.js';
import { factoringEvent, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, PROVIDER_IBAN, TERMS, transferOf } from '../payout-reports/fixtures.js';

// An accountant of a merchant whose contract is in pounds (CONTRACT_TERMS currency GBP) pulls
// `report payouts` / GET /api/payouts?format=csv|xlsx into a spreadsheet. docs/reports.md: amounts
// are "decimal text with their currency in the next column"; in XLSX "amounts are real numbers in the
// row's currency format"; credited and difference are empty when the credit is "in another currency
// than the payout report's, a GBP payout booked converted into a EUR account, which is not compared".

const CONTRACT = JSON.stringify({ currency: 'GBP', fixed_fee_cents: 30, vat_percent: '19', mdr: [{ percent: '2.5' }] });
const GBP_TERMS = { ...TERMS, currency: 'GBP' as const };
const GB_IBAN = 'GB82WEST12345698765432';
const EUR_IBAN = 'DE44500105175407324931';
const head = 'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban';
const line = (ref: string, date: string, cents: bigint, currency: string, sepa: string, account: string) =>
  [ref, date, date, `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`, currency, 'CRDT', 'Party', PROVIDER_IBAN, sepa, `Payout ${sepa}`, account].join(',');
const statement = (lines: string[]) => Buffer.from(`${[head, ...lines].join('\r\n')}\r\n`);
const day = (d: number) => `2026-03-${String(d).padStart(2, '0')}T06:00:00.000000000Z`;

describe('GBP merchant: report payouts, a payout event that names no amount', () => {
  it.skipIf(!existsSync('/usr/bin/soffice'))('the credited amount and the report composition still name their currency (GBP) in CSV and XLSX', async () => {
    const db = await createTestDatabase('gbpsheet_no_amount', { poolMax: 4 });
    const sepa = 'PO2026030200000401';
    await invoiceEvent(db, { ref: 'INV-N1', order: randomUUID(), eventTime: day(1) });
    const rows = [{ ...invoiceRow({ doc: 'INV-N1', order: 'ORD-N1', cents: 10_000n, ref: sepa }), currency: 'GBP' as const }];
    const uuid = await payoutEvent(db, { sepa, cents: transferOf(rows), eventTime: day(2), invoices: ['INV-N1'] });
    // The provider's payout/complete without amount_cents (the rules: "a payload without amount_cents, A null").
    await db.sql`update payout_events set amount_cents = null where payout_uuid = ${uuid}`;
    await importReport(db, rows);
    await importStatement(db, 'sandbox', statement([line('G1', '2026-03-03', transferOf(rows), 'GBP', sepa, GB_IBAN)]), 'gbp.csv');

    const report = (await fetchAll(payoutsSource(db, { environment: 'sandbox', currency: 'GBP' }), undefined, 100))!.find((r) => r.payout_uuid === uuid)!;
    expect({ credited_amount: report.credited_amount, report_net: report.report_net }).toEqual({ credited_amount: '96.67', report_net: '96.67' });
    expect.soft(report.currency, 'CSV/JSON currency column beside credited 96.67 and report_net 96.67 (GBP credit, GBP report)').toBe('GBP');

    const server = await startOperatorServer(db, { CONTRACT_TERMS: CONTRACT });
    try {
      const answer = await call(`${server.url}/api/payouts?format=xlsx`);
      expect(answer.status).toBe(200);
      const dir = await mkdtemp(path.join(tmpdir(), 'gbpsheet-'));
      await writeFile(path.join(dir, 'payouts.xlsx'), answer.bytes);
      await mkdir(path.join(dir, 'out'));
      const [fods] = await toFods([path.join(dir, 'payouts.xlsx')], path.join(dir, 'out'));
      const row = (await readFods(fods!)).find((r) => r[0]?.text === uuid)!;
      expect(row).toBeDefined();
      const shown = (c: string) => row[PAYOUT_COLUMNS.indexOf(c as (typeof PAYOUT_COLUMNS)[number])]?.text;
      expect.soft({ credited_amount: shown('credited_amount'), report_net: shown('report_net') }, 'as LibreOffice shows the XLSX cells')
        .toEqual({ credited_amount: '96.67 GBP', report_net: '96.67 GBP' });
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('GBP merchant: a GBP payout booked as an FX payment into a EUR account (camt.053 instructed in GBP)', () => {
  it('report payouts does not compare EUR 1,170.00 with the GBP 1,000.00 payout (credited and difference empty), as payout_amount_mismatch does not', async () => {
    const db = await createTestDatabase('gbpsheet_fx_camt', { poolMax: 4 });
    const sepa = 'PO2026030200000501';
    const uuid = await payoutEvent(db, { sepa, cents: 100_000n, eventTime: day(2) });
    const camt = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-03-04T06:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><CreDtTm>2026-03-04T06:00:00</CreDtTm>
<FrToDt><FrDtTm>2026-03-01T00:00:00</FrDtTm><ToDtTm>2026-03-07T23:59:59</ToDtTm></FrToDt>
<Acct><Id><IBAN>${EUR_IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Bal><Tp><CdOrPrtry><Cd>PRCD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">0.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-02-28</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1170.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-07</Dt></Dt></Bal>
<Ntry><Amt Ccy="EUR">1170.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
<BookgDt><Dt>2026-03-03</Dt></BookgDt><ValDt><Dt>2026-03-03</Dt></ValDt><AcctSvcrRef>FX1</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>XBCT</SubFmlyCd></Fmly></Domn></BkTxCd>
<NtryDtls><TxDtls>
<Refs><EndToEndId>${sepa}</EndToEndId></Refs>
<AmtDtls><InstdAmt><Amt Ccy="GBP">1000.00</Amt></InstdAmt><TxAmt><Amt Ccy="EUR">1170.00</Amt></TxAmt></AmtDtls>
<RltdPties><Dbtr><Nm>BNPL Provider Ltd</Nm></Dbtr><DbtrAcct><Id><IBAN>${PROVIDER_IBAN}</IBAN></Id></DbtrAcct></RltdPties>
<RmtInf><Ustrd>Payout ${sepa}</Ustrd></RmtInf>
</TxDtls></NtryDtls></Ntry>
</Stmt></BkToCstmrStmt></Document>`;
    await importStatement(db, 'sandbox', Buffer.from(camt), 'fx.xml');
    const [stored] = await db.sql<{ remittance: string | null; currency: string }[]>`select remittance, currency from statement_lines`;
    expect(stored?.remittance).toContain('instructed in GBP 100000');
    await pass(db, new Date('2026-03-20T12:00:00Z'), { terms: GBP_TERMS });
    // The rule's view: EUR 1,170.00 booked for a GBP 1,000.00 payout says nothing about the amount.
    const mismatch = await fetchAll(discrepancySource(db, { status: 'all', kinds: ['payout_amount_mismatch'], currency: 'GBP' }), undefined, 100);
    expect(mismatch).toEqual([]);

    const report = (await fetchAll(payoutsSource(db, { environment: 'sandbox', currency: 'GBP' }), undefined, 100))!.find((r) => r.payout_uuid === uuid)!;
    expect({ credited_amount: report.credited_amount, difference: report.difference }, `the payouts report row of the GBP 1,000.00 payout (shown as ${String(report.amount)} ${String(report.currency)})`)
      .toEqual({ credited_amount: null, difference: null });
  }, 60_000);
});

describe('GBP merchant: a payout report without a Currency column, the payout booked converted into a EUR account', () => {
  it('report payouts names the payout GBP, as the deduction finding on the same rows does, and does not compare the EUR credit', async () => {
    const db = await createTestDatabase('gbpsheet_unstated_fx', { poolMax: 4 });
    const sepa = 'PO2026030200000601';
    await invoiceEvent(db, { ref: 'INV-U1', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(db, { ref: 'INV-U1', receivedAt: day(1) });
    const good = invoiceRow({ doc: 'INV-U1', order: 'ORD-U1', cents: 10_000n, ref: sepa });
    // No Currency column, no £ signs (currency null); a discount 1.00 above the contract's 2.5 %.
    const row = { ...good, currency: null, discountCents: 350n, totalDeductionsCents: good.totalDeductionsCents + 100n, transferAmountCents: good.transferAmountCents - 100n };
    const uuid = await payoutEvent(db, { sepa, cents: transferOf([row]), eventTime: day(2), invoices: ['INV-U1'] });
    await importReport(db, [row]);
    // The bank converted it into the merchant's EUR account: the same digits, in EUR.
    await importStatement(db, 'sandbox', statement([line('E1', '2026-03-03', transferOf([row]), 'EUR', sepa, EUR_IBAN)]), 'eur.csv');
    await pass(db, new Date('2026-03-20T12:00:00Z'), { terms: GBP_TERMS });

    const [deduction] = (await fetchAll(discrepancySource(db, { status: 'all', kinds: ['payout_deduction_mismatch'], currency: 'GBP' }), undefined, 100))!;
    expect(deduction?.currency).toBe('GBP');

    const report = (await fetchAll(payoutsSource(db, { environment: 'sandbox', currency: 'GBP' }), undefined, 100))!.find((r) => r.payout_uuid === uuid)!;
    expect({ currency: report.currency, credited_amount: report.credited_amount, difference: report.difference }, `report_fee ${String(report.report_fee)} of the rows the finding calls GBP`)
      .toEqual({ currency: 'GBP', credited_amount: null, difference: null });
  }, 60_000);
});
