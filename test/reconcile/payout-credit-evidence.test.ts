import { describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { importStatement } from '../../src/statements/import.js';
import { payoutsSource } from '../../src/reports/payouts.js';
import { fetchPage } from '../../src/reports/source.js';
import { acknowledgeDiscrepancy } from '../../src/reconcile/ack.js';
import { findings, importCsv, MERCHANT_IBAN, OTHER_IBAN, pass, payoutEvent, PROVIDER_IBAN } from '../statements/fixtures.js';

/**
 * Payout rules on what a bank credit proves: a blank payout reference names no credit; a
 * statement_credit_without_payout keeps its entity (and so its acknowledgement) when a later line
 * shares its bank entry reference; a batch entry naming several payouts proves each present; an FX
 * credit's amount is not compared with the payout's; a short credit waits for the statements to
 * cover the settlement window; a debit with the payout's reference (a storno, a return) nets.
 */

/** A CAMT.053 of the merchant account (balances omitted: imported with balances not checked). */
const camt = (id: string, from: string, to: string, entries: string) => Buffer.from(`<?xml version="1.0"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><GrpHdr><MsgId>M-${id}</MsgId><CreDtTm>2026-03-09T00:00:00</CreDtTm></GrpHdr>
<Stmt><Id>${id}</Id><FrToDt><FrDtTm>${from}</FrDtTm><ToDtTm>${to}</ToDtTm></FrToDt>
<Acct><Id><IBAN>${MERCHANT_IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>
${entries}
</Stmt></BkToCstmrStmt></Document>`);

/** A CSV in the project's own columns, rows given cell by cell (the account last). */
const csv = (account: string, rows: string[][]) => Buffer.from(`${[
  'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban',
  ...rows.map((r) => [...r, account].join(',')),
].join('\r\n')}\r\n`);

const T = (day: number, time = '06:00:00') => `2026-03-${String(day).padStart(2, '0')}T${time}.000000000Z`;
const at = (day: number, time = '12:00:00') => new Date(`2026-03-${String(day).padStart(2, '0')}T${time}Z`);

async function db(label: string): Promise<TestDatabase> {
  return createTestDatabase(`payout_evidence_${label}`);
}

describe('a payout without a SEPA reference', () => {
  it('is not "credited" by an unrelated customer transfer whose text ends in a full stop', async () => {
    const d = await db('empty_ref');
    // A payout cancelled before any SEPA instruction was made: the provider sends an empty reference.
    await payoutEvent(d, { sepa: '', cents: 100_000n, eventTime: T(2), status: 'cancelled' });
    // A tenant's rent, from another IBAN, with no reference at all.
    await importStatement(d, 'sandbox', csv(MERCHANT_IBAN, [['B1', '2026-03-03', '2026-03-03', '50.00', 'EUR', 'CRDT', 'Tenant', OTHER_IBAN, '', 'Miete Maerz.']]), 'rent.csv');
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect(await findings(d, 'payout_cancelled_but_credited')).toEqual([]);
  });
});

describe('statement_credit_without_payout and an acknowledgement', () => {
  it('keeps an acknowledged finding acknowledged when another account books a credit with the same bank entry reference', async () => {
    const d = await db('same_ref');
    await importStatement(d, 'sandbox', csv(MERCHANT_IBAN, [['X1', '2026-03-03', '2026-03-03', '50.00', 'EUR', 'CRDT', 'Provider', PROVIDER_IBAN, 'PO2026030200000009', 'Test']]), 'a.csv');
    await pass(d, at(4));
    const [open] = await d.sql<{ id: string }[]>`select id from discrepancies where kind = 'statement_credit_without_payout'`;
    await acknowledgeDiscrepancy(d, Number(open!.id), 'provider test transfer, confirmed by phone', 'alice');
    await importStatement(d, 'sandbox', csv(OTHER_IBAN, [['X1', '2026-03-05', '2026-03-05', '70.00', 'EUR', 'CRDT', 'Provider', PROVIDER_IBAN, 'PO2026030200000008', 'Other']]), 'b.csv');
    await pass(d, at(6));
    // The first line keeps its entity (X1); the later one is X1#<id>, so the note stays where it was written.
    const rows = await d.sql<{ id: string; entity_id: string; status: string }[]>`
      select id::text, entity_id, status::text from discrepancies where kind = 'statement_credit_without_payout' order by id`;
    expect(rows.map((r) => [r.id, r.status])).toEqual([[open!.id, 'acknowledged'], [expect.any(String), 'open']]);
    expect(rows[0]!.entity_id).toBe('X1');
    expect(rows[1]!.entity_id).toMatch(/^X1#\d+$/);
  });
});

describe('a CAMT.053 batch entry whose transaction details name several payouts', () => {
  const batch = (amount: string, ...txs: [string, string][]) => `
<Ntry><Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-03</Dt></BookgDt><AcctSvcrRef>E1</AcctSvcrRef><NtryDtls>
${txs.map(([ref, a]) => `<TxDtls><Refs><EndToEndId>${ref}</EndToEndId></Refs><Amt Ccy="EUR">${a}</Amt></TxDtls>`).join('\n')}
</NtryDtls></Ntry>`;

  it('covering part of it: proves each payout present and judges none of their amounts against the whole entry', async () => {
    const d = await db('batch_part');
    await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 100_000n, eventTime: T(2) });
    await payoutEvent(d, { sepa: 'PO2026030200000002', cents: 20_000n, eventTime: T(2) });
    // 1,300.00 booked as one entry; the details list 1,000.00 and 200.00 (the two payouts), not the other 100.00.
    await importStatement(d, 'sandbox', camt('S1', '2026-03-01T00:00:00', '2026-03-08T23:59:59',
      batch('1300.00', ['PO2026030200000001', '1000.00'], ['PO2026030200000002', '200.00'])), 'batch.xml');
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect(await findings(d, 'payout_amount_mismatch')).toEqual([]);
    expect(await findings(d, 'payout_not_on_statement')).toEqual([]);
  });

  it('whose amount is the sum of the payouts it names: each got its own amount, so a second credit of one is an excess', async () => {
    const d = await db('batch_sum');
    const first = await payoutEvent(d, { sepa: 'PO2026030200000001', cents: 100_000n, eventTime: T(2) });
    await payoutEvent(d, { sepa: 'PO2026030200000002', cents: 20_000n, eventTime: T(2) });
    // Details without amounts: the entry stays one line naming both payouts, 1,200.00 = 1,000.00 + 200.00.
    await importStatement(d, 'sandbox', camt('S1', '2026-03-01T00:00:00', '2026-03-08T23:59:59', `
<Ntry><Amt Ccy="EUR">1200.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-03</Dt></BookgDt><AcctSvcrRef>E1</AcctSvcrRef><NtryDtls>
<TxDtls><Refs><EndToEndId>PO2026030200000001</EndToEndId></Refs></TxDtls><TxDtls><Refs><EndToEndId>PO2026030200000002</EndToEndId></Refs></TxDtls>
</NtryDtls></Ntry>`), 'batch.xml');
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect(await findings(d, 'payout_amount_mismatch')).toEqual([]);
    expect(await findings(d, 'payout_not_on_statement')).toEqual([]);
    await importCsv(d, [{ ref: 'B9', date: '2026-03-09', cents: 100_000n, sepa: 'PO2026030200000001' }], 'again.csv');
    await pass(d, at(10), { accounts: [MERCHANT_IBAN] });
    expect((await findings(d, 'payout_amount_mismatch')).map((f) => [f.entity_id, f.expected, f.observed])).toEqual([[first, '100000', '200000']]);
  });
});

describe('a payout credited in another currency (an FX conversion by the bank)', () => {
  it('is not an amount mismatch when the transaction shows the payout amount in the instructed currency', async () => {
    const d = await db('fx');
    await payoutEvent(d, { sepa: 'PO2026030200000003', cents: 100_000n, eventTime: T(2) });
    // GBP 1,000.00 instructed, EUR 1,170.00 booked to the EUR account.
    await importStatement(d, 'sandbox', camt('S1', '2026-03-01T00:00:00', '2026-03-08T23:59:59', `
<Ntry><Amt Ccy="EUR">1170.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-03</Dt></BookgDt><AcctSvcrRef>E1</AcctSvcrRef><NtryDtls>
<TxDtls><Refs><EndToEndId>PO2026030200000003</EndToEndId></Refs><Amt Ccy="GBP">1000.00</Amt>
<RltdPties><DbtrAcct><Id><IBAN>${PROVIDER_IBAN}</IBAN></Id></DbtrAcct></RltdPties></TxDtls>
</NtryDtls></Ntry>`), 'fx.xml');
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect(await findings(d, 'payout_amount_mismatch')).toEqual([]);
    expect(await findings(d, 'payout_not_on_statement')).toEqual([]);
  });

  it('is not an amount mismatch when the payout report names another currency than the credit', async () => {
    const d = await db('fx_report');
    const payout = await payoutEvent(d, { sepa: 'PO2026030200000003', cents: 100_000n, eventTime: T(2) });
    const [report] = await d.sql<{ id: string }[]>`
      insert into payout_reports (environment, sha256, file_name, format, row_count) values ('sandbox', 'x', 'r.csv', 'csv', 1) returning id`;
    await d.sql`
      insert into payout_report_rows (environment, report_id, line, payout_uuid, doc_no, doc_type, currency, transaction_amount_cents,
                                      transaction_fee_cents, gross_purchase_price_cents, discount_cents, vat_on_discount_cents,
                                      transfer_amount_cents, total_deductions_cents)
      values ('sandbox', ${report!.id}, 2, ${payout}, 'RE1', 'invoice', 'GBP', 100000, 0, 100000, 0, 0, 100000, 0)`;
    await importCsv(d, [{ ref: 'B1', date: '2026-03-03', cents: 117_000n, sepa: 'PO2026030200000003' }], 'fx.csv');
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect(await findings(d, 'payout_amount_mismatch')).toEqual([]);
  });
});

describe('a payout credit of which only part is on the statements imported so far', () => {
  it('is flagged short only once the statements cover its settlement window; an excess at once', async () => {
    const d = await db('partial');
    const short = await payoutEvent(d, { sepa: 'PO2026030300000004', cents: 100_000n, eventTime: T(3) });
    const over = await payoutEvent(d, { sepa: 'PO2026030300000005', cents: 10_000n, eventTime: T(3) });
    const entry = (amount: string, ref: string, sepa: string) => `
<Ntry><Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-03</Dt></BookgDt><AcctSvcrRef>${ref}</AcctSvcrRef><NtryDtls>
<TxDtls><Refs><EndToEndId>${sepa}</EndToEndId></Refs><Amt Ccy="EUR">${amount}</Amt></TxDtls></NtryDtls></Ntry>`;
    // The morning's intraday statement (to 12:00) holds the first part of a credit the bank split in two.
    await importStatement(d, 'sandbox', camt('AM', '2026-03-03T00:00:00', '2026-03-03T12:00:00',
      entry('600.00', 'A1', 'PO2026030300000004') + entry('150.00', 'A2', 'PO2026030300000005')), 'am.xml');
    await pass(d, at(3, '13:00:00'), { accounts: [MERCHANT_IBAN] });
    expect((await findings(d, 'payout_amount_mismatch')).map((f) => [f.entity_id, f.observed])).toEqual([[over, '15000']]);
    // The statements now reach past the window's end (03-06 06:00), and the rest never came.
    await importStatement(d, 'sandbox', camt('REST', '2026-03-03T12:00:00', '2026-03-06T23:59:59', ''), 'rest.xml');
    await pass(d, at(7), { accounts: [MERCHANT_IBAN] });
    const flagged = (await findings(d, 'payout_amount_mismatch')).map((f) => [f.entity_id, f.expected, f.observed]);
    expect(flagged).toEqual([[short, '100000', '60000'], [over, '10000', '15000']].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)));
  });
});

describe('a debit carrying a payout\'s reference', () => {
  it('nets a duplicate payout credit the bank reversed: no amount mismatch once the reversal is on the statement', async () => {
    const d = await db('reversal');
    await payoutEvent(d, { sepa: 'PO2026030200000005', cents: 100_000n, eventTime: T(2) });
    await importCsv(d, [
      { ref: 'B1', date: '2026-03-03', cents: 100_000n, sepa: 'PO2026030200000005' },
      { ref: 'B2', date: '2026-03-03', cents: 100_000n, sepa: 'PO2026030200000005' }, // booked twice by mistake
    ], 'twice.csv');
    await pass(d, at(4), { accounts: [MERCHANT_IBAN] });
    expect((await findings(d, 'payout_amount_mismatch')).map((f) => f.observed)).toEqual(['200000']);
    await importCsv(d, [{ ref: 'B3', date: '2026-03-04', cents: -100_000n, sepa: 'PO2026030200000005' }], 'storno.csv'); // the bank's storno of B2
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect((await findings(d, 'payout_amount_mismatch')).map((f) => f.status)).toEqual(['resolved']);
    // report payouts (and the page) net the storno as the rule does, and list it.
    const [row] = (await fetchPage(payoutsSource(d, { environment: 'sandbox' }), undefined, 10)).rows;
    expect(row).toMatchObject({ credited_cents: '100000', difference: '0.00', matched_bank_line: 'B1 2026-03-03;B2 2026-03-03;B3 2026-03-04 debit' });
  });

  it('nets a cancelled payout\'s credit the merchant sent back: not payout_cancelled_but_credited', async () => {
    const d = await db('returned');
    await payoutEvent(d, { sepa: 'PO2026030200000006', cents: 100_000n, eventTime: T(2), status: 'cancelled' });
    await importCsv(d, [
      { ref: 'B1', date: '2026-03-03', cents: 100_000n, sepa: 'PO2026030200000006' },
      { ref: 'B2', date: '2026-03-04', cents: -100_000n, sepa: 'PO2026030200000006' }, // returned to the provider
    ], 'returned.csv');
    await pass(d, at(9), { accounts: [MERCHANT_IBAN] });
    expect(await findings(d, 'payout_cancelled_but_credited')).toEqual([]);
  });
});
