import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { parseStatement } from '../../src/statements/detect.js';
import { importLimits, importStatement } from '../../src/statements/import.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { csvAmountToCents } from '../../src/statements/money.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { csvStatement, MERCHANT_IBAN } from './fixtures.js';
import { testMetrics } from '../helpers/metrics.js';

/** Malformed, signed and implausible statement amounts, and oversized files, are refused with the place named. */

const camt = (amount: string, direction = 'CRDT') => `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-03-02T18:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><CreDtTm>2026-03-02T18:00:00</CreDtTm><Acct><Id><IBAN>${MERCHANT_IBAN}</IBAN></Id></Acct>
<Ntry><Amt Ccy="EUR">10.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-02</Dt></BookgDt><AcctSvcrRef>R0</AcctSvcrRef></Ntry>
<Ntry><Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>${direction}</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-03-02</Dt></BookgDt><AcctSvcrRef>R1</AcctSvcrRef></Ntry>
</Stmt></BkToCstmrStmt></Document>
`;

const csv = (amount: string) =>
  csvStatement([{ ref: 'A', date: '2026-03-02', cents: 100n, sepa: 'PO2026030200000001' }]).replace(/\r\n$/, '') +
  `\r\nB,2026-03-02,2026-03-02,"${amount}",EUR,CRDT,Party,DE02120300000000202051,PO2026030200000002,x,${MERCHANT_IBAN}\r\n`;

describe('statement amounts as text', () => {
  it('refuses thousands separators that do not group three digits', () => {
    expect(() => csvAmountToCents('12,3.4')).toThrow(/thousands separators must group three digits/);
    expect(() => csvAmountToCents('1.23,4')).toThrow(/not a decimal amount/);
    expect(() => csvAmountToCents('12 3,4')).toThrow(/not a decimal amount/);
    expect(csvAmountToCents('1.234,56')).toBe(123456n);
    expect(csvAmountToCents('1,234.56')).toBe(123456n);
    expect(csvAmountToCents("1'234.50")).toBe(123450n);
    expect(csvAmountToCents('-50,00')).toBe(-5000n);
  });

  it('names the CSV row of a malformed amount', () => {
    expect(() => parseStatement(csv('12,3.4'))).toThrow(/CSV row 3: not a decimal amount: '12,3\.4'/);
    expect(parseStatement(csv('1,234.00')).lines[1]?.amountCents).toBe(123400n);
  });

  it('refuses a signed CAMT amount instead of dropping its sign, naming the entry', () => {
    expect(() => parseStatement(camt('-50.00'))).toThrow(/camt\.053 statement S1 entry 2: signed amount '-50\.00'/);
    const control = parseStatement(camt('50.00'));
    expect(control.lines.map((l) => [l.amountCents, l.direction])).toEqual([[1000n, 'credit'], [5000n, 'credit']]);
  });
});

describe('statement limits on import', () => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase('statement_limits');
    dir = await mkdtemp(path.join(tmpdir(), 'bnpl-stmt-limits-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const limits = importLimits(loadConfig({}));
  const stored = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines`)[0]?.n;

  it('refuses an implausible amount over STATEMENT_MAX_AMOUNT_CENTS, naming file and line, and stores nothing', async () => {
    await expect(importStatement(db, 'sandbox', Buffer.from(csv('92000000000000000.00')), 'huge.csv', limits)).rejects.toThrow(
      /^huge\.csv: CSV row 3: amount of 9200000000000000000 cents \(EUR\) is over STATEMENT_MAX_AMOUNT_CENTS \(1000000000000\)$/,
    );
    await expect(importStatement(db, 'sandbox', Buffer.from(camt('10000000001.00')), 'big.xml', limits)).rejects.toThrow(
      /^big\.xml: camt\.053 statement S1 entry 2: amount of 1000000000100 cents/,
    );
    expect(await stored()).toBe(0);
    // At the ceiling exactly, and with a higher setting, it is a booking.
    const at = await importStatement(db, 'sandbox', Buffer.from(camt('10000000000.00')), 'at.xml', limits);
    expect(at.linesNew).toBe(2);
  });

  it('refuses a file over STATEMENT_MAX_FILE_BYTES with the reason, and the inbox moves it to failed/', async () => {
    const text = csvStatement(Array.from({ length: 200 }, (_, i) => ({ ref: `L${i}`, date: '2026-03-03', cents: 100n + BigInt(i), sepa: `PO20260303${String(i).padStart(8, '0')}` })));
    const size = Buffer.byteLength(text);
    await expect(importStatement(db, 'sandbox', Buffer.from(text), 'long.csv', { ...limits, maxFileBytes: size - 1 })).rejects.toThrow(
      `long.csv: larger than STATEMENT_MAX_FILE_BYTES (${size - 1} bytes); split the statement or raise the setting`,
    );

    const config = loadConfig({ RECON_DATA_DIR: path.join(dir, 'data'), PROVIDER_ENV: 'sandbox', STATEMENT_MAX_FILE_BYTES: String(size - 1) });
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown: new Shutdown(silentLogger(), 5000), ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 1 });
    try {
      await inbox.runNow();
      const old = new Date(Date.now() - 60_000);
      await writeFile(path.join(inbox.dir, 'long.csv'), text);
      await utimes(path.join(inbox.dir, 'long.csv'), old, old);
      const result = await inbox.runNow();
      expect(result.failed.map((f) => f.file)).toEqual(['long.csv']);
      expect((await readdir(path.join(inbox.dir, 'failed'))).sort()).toEqual(['long.csv', 'long.csv.error']);
      expect(await readFile(path.join(inbox.dir, 'failed', 'long.csv.error'), 'utf8')).toContain('larger than STATEMENT_MAX_FILE_BYTES');
      const [n] = await db.sql<{ n: number }[]>`select count(*)::int as n from statement_lines where bank_reference like 'L%'`;
      expect(n?.n).toBe(0);
    } finally {
      await inbox.stop();
    }
  });
});
