import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { hasChromium, openPage, type PageUnderTest } from './browser.js';
import { insertFinding } from '../http/operator-harness.js';
import { PROVIDER_IBAN } from '../statements/fixtures.js';

/**
 * A bank statement's text reaching the accountants' page: a CAMT.053 whose Amt/@Ccy is not an ISO
 * 4217 code ('EURO'; the schema's ActiveOrHistoricCurrencyCode is [A-Z]{3}). The import stored it
 * as written, and the page handed it to Intl.NumberFormat({ currency }), which throws RangeError
 * for it: the Upload view then said a stored statement was "not imported: nothing was stored", and
 * one finding in such a currency blanked the whole Discrepancies view. Now the import refuses the
 * file, and a value already in a ledger is written beside its amount.
 */
const TOKEN = 'ada-9d0c7e6b5a4f3e2d1c0b9a8f7e6d5c4b';
const REFERENCE = 'PO2026030200000077';

const camt = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-03-03T06:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S-EURO-1</Id><ElctrncSeqNb>12</ElctrncSeqNb><CreDtTm>2026-03-03T06:00:00</CreDtTm>
<FrToDt><FrDtTm>2026-03-02T00:00:00</FrDtTm><ToDtTm>2026-03-02T23:59:59</ToDtTm></FrToDt>
<Acct><Id><IBAN>DE44500105175407324931</IBAN></Id></Acct>
<Ntry><Amt Ccy="EURO">123.45</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-02</Dt></BookgDt><ValDt><Dt>2026-03-02</Dt></ValDt>
<AcctSvcrRef>EURO-1</AcctSvcrRef>
<NtryDtls><TxDtls><Refs><EndToEndId>${REFERENCE}</EndToEndId></Refs>
<RltdPties><Dbtr><Nm>Provider GmbH</Nm></Dbtr><DbtrAcct><Id><IBAN>${PROVIDER_IBAN}</IBAN></Id></DbtrAcct></RltdPties>
<RmtInf><Ustrd>${REFERENCE}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
</Stmt></BkToCstmrStmt></Document>`;

let db: TestDatabase;
let ui: PageUnderTest;
let server: HttpServer;
let page: Page;

beforeAll(async () => {
  db = await createTestDatabase('page_untrusted_currency');
  ui = await openPage(db, { token: TOKEN, settings: { DATABASE_URL: db.url, PAYOUT_SOURCE_IBANS: PROVIDER_IBAN } });
  ({ server, page } = ui);
  await page.goto(server.url);
  await ui.signIn();
}, 120_000);

afterAll(async () => {
  await ui?.close();
});

describe.skipIf(!hasChromium)('a statement whose currency is not an ISO code, on the page', () => {
  it('the Upload view says truly whether the statement was stored', async () => {
    await page.goto(`${server.url}/#upload`);
    await page.waitForSelector('#up-statement-file');
    await page.setInputFiles('#up-statement-file', { name: 'euro.xml', mimeType: 'application/xml', buffer: Buffer.from(camt) });
    await page.click('#up-statement button[type="submit"]');
    await page.waitForFunction(() => {
      const t = (globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }).document.getElementById('up-statement-result')?.textContent ?? '';
      return t !== '' && !/Uploading/.test(t);
    }, undefined, { timeout: 30_000 });
    const shown = await page.locator('#up-statement-result').innerText();
    const [stored] = await db.sql<{ statements: number; lines: number }[]>`
      select (select count(*)::int from bank_statements) as statements, (select count(*)::int from statement_lines) as lines`;
    expect(stored, 'a statement in no currency was stored').toEqual({ statements: 0, lines: 0 });
    expect(shown).toMatch(/euro\.xml was refused: nothing was stored/);
    expect(shown).toMatch(/'EURO' is not a currency code/);
  }, 60_000);

  it('one finding on such a line does not keep the Discrepancies view from listing the others', async () => {
    // A finding on a credit in such a currency, as a ledger that imported the file before could hold
    // it (the rules name the line's currency in the evidence), and one ordinary finding on an order.
    await insertFinding(db, { kind: 'statement_credit_without_payout', entityType: 'statement_line', entity: '1', observed: '12345', sepa: REFERENCE, evidence: { currency: 'EURO' } });
    const [raised] = await db.sql<{ id: string }[]>`select id::text from discrepancies where kind = 'statement_credit_without_payout'`;
    const ordinary = await insertFinding(db, { kind: 'missed_webhook', entity: '00000000-0000-4000-8000-000000000001', ref: 'INV-ORDINARY-1' });
    await page.goto(`${server.url}/#overview`);
    await page.goto(`${server.url}/#discrepancies`);
    await page.waitForFunction(() => /discrepanc(y|ies) shown|Could not load/.test((globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText), undefined, { timeout: 20_000 });
    const text = await page.locator('#view-discrepancies').innerText();
    expect(text, `the list should show finding ${ordinary} (INV-ORDINARY-1) beside finding ${raised?.id}; the view says: ${JSON.stringify(text.split('\n').filter((l) => /Could not load|shown/.test(l)).join(' '))}`).toContain('INV-ORDINARY-1');
    expect(text).toMatch(/123[.,]45 EURO/);
  }, 60_000);
});
