import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { command } from '../../src/commands/statement.js';
import { acknowledgeDiscrepancy } from '../../src/reconcile/ack.js';
import { describeStatementImport, importStatement } from '../../src/statements/import.js';
import { StatementFormatError } from '../../src/statements/types.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { pass } from '../reconcile/fixtures.js';

const file = (name: string) => readFileSync(path.join(import.meta.dirname, 'banks', name));

let db: TestDatabase;
useTestDatabase('statements_balances', (database) => (db = database));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'bnpl-stmt-bal-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// One MT940 message whose closing balance is 1.50 short of opening + bookings.
const unbalanced = (number: string) =>
  Buffer.from([':20:X', ':25:NL81ASNB0708271234', `:28C:${number}`, ':60F:C250301EUR100,00', ':61:2503020302C10,00NTRFNONREF//B1',
    ':86:/EREF/E1/REMI/Test/', ':61:2503020302D2,00NTRFNONREF//B2', ':86:/REMI/Fee/', ':62F:C250302EUR106,50', '-'].join('\n'));

const row = async (id: number) =>
  (await db.sql<{ line_count: number; balances_unchecked: number | null; statements_unbalanced: number | null }[]>`
    select line_count, balances_unchecked, statements_unbalanced from bank_statements where id = ${id}`)[0];

const counts = async () =>
  (await db.sql<{ files: number; lines: number; findings: number }[]>`
    select (select count(*)::int from bank_statements) as files, (select count(*)::int from statement_lines) as lines,
           (select count(*)::int from discrepancies) as findings`)[0]!;

describe('balances on import', () => {
  it('imports statements missing a balance, recording on the result and the statement row that their balances were not checked', async () => {
    const r = await importStatement(db, 'sandbox', file('ing-unchecked.sta'), 'ing-unchecked.sta');
    expect(r).toMatchObject({ statements: 2, linesRead: 3, linesNew: 3, balancesUnchecked: 2, statementsUnbalanced: 0, unbalancedFindings: [] });
    expect(await row(r.statementId)).toEqual({ line_count: 3, balances_unchecked: 2, statements_unbalanced: 0 });
    const again = await importStatement(db, 'sandbox', file('ing-unchecked.sta'), 'ing-unchecked.sta');
    expect(again).toMatchObject({ alreadyImported: true, balancesUnchecked: 2, statementsUnbalanced: 0 });
    const checked = await importStatement(db, 'sandbox', file('asn.sta'), 'asn.sta');
    expect(checked).toMatchObject({ balancesUnchecked: 0, statementsUnbalanced: 0 });
  });

  it('refuses a statement that does not balance, storing nothing, unless told to accept it', async () => {
    const before = await counts();
    await expect(importStatement(db, 'sandbox', unbalanced('7'), 'unbalanced.sta')).rejects.toThrow(StatementFormatError);
    await expect(importStatement(db, 'sandbox', unbalanced('7'), 'unbalanced.sta')).rejects.toThrow(/does not balance: .* \(difference -1\.50\)$/);
    expect(await counts()).toEqual(before);
  });

  it('with acceptUnbalanced stores it and opens a statement_unbalanced finding on the statement with the difference, which a person acknowledges and a pass leaves alone', async () => {
    const r = await importStatement(db, 'sandbox', unbalanced('8'), 'unbalanced-8.sta', { acceptUnbalanced: true });
    expect(r).toMatchObject({ linesRead: 2, linesNew: 2, balancesUnchecked: 0, statementsUnbalanced: 1 });
    expect(r.unbalancedFindings).toHaveLength(1);
    expect(await row(r.statementId)).toEqual({ line_count: 2, balances_unchecked: 0, statements_unbalanced: 1 });
    const [finding] = await db.sql<Record<string, unknown>[]>`
      select id::int, kind::text, status::text, entity_type::text, entity_id, subject, expected, observed, details, evidence from discrepancies
      where kind = 'statement_unbalanced'`;
    expect(finding).toEqual({
      id: r.unbalancedFindings[0], kind: 'statement_unbalanced', status: 'open', entity_type: 'statement', entity_id: String(r.statementId), subject: '0',
      expected: '10650', observed: '10800',
      details: 'unbalanced-8.sta: MT940 message 1 (:28C: 8) does not balance: opening 100.00 + credits 10.00 - debits 2.00 = 108.00 EUR, but the closing balance is 106.50 (difference -1.50); stored as told (--accept-unbalanced): a booking may be missing or invented',
      evidence: {
        statement_id: r.statementId, section_index: 0, file_name: 'unbalanced-8.sta', statement: 'mt940|NL81ASNB0708271234|8|2025-03-01|10000|2025-03-02|10650|EUR',
        account_iban: 'NL81ASNB0708271234', currency: 'EUR', opening_cents: '10000', credit_cents: '1000', debit_cents: '200', closing_cents: '10650', difference_cents: '-150',
      },
    });
    const history = await db.sql`select from_status, to_status::text, actor, reason from discrepancy_history where discrepancy_id = ${r.unbalancedFindings[0]!}`;
    expect(history).toEqual([{ from_status: null, to_status: 'open', actor: 'importer', reason: 'detected' }]);
    // The same bytes again: nothing new, no second finding.
    const again = await importStatement(db, 'sandbox', unbalanced('8'), 'unbalanced-8.sta', { acceptUnbalanced: true });
    expect(again).toMatchObject({ alreadyImported: true, statementsUnbalanced: 1, unbalancedFindings: r.unbalancedFindings });
    expect(describeStatementImport('unbalanced-8.sta', again)).toContain(`unbalanced, stored with findings ${r.unbalancedFindings[0]}: 1`);
    expect((await db.sql`select id from discrepancies where kind = 'statement_unbalanced'`).length).toBe(1);

    expect(await acknowledgeDiscrepancy(db, r.unbalancedFindings[0]!, 'bank confirmed a missing fee line', 'anna')).toMatchObject({ outcome: 'acknowledged' });
    await pass(db, new Date(), 'sandbox', { full: true });
    const [after] = await db.sql`select status::text, ack_note from discrepancies where id = ${r.unbalancedFindings[0]!}`;
    expect(after).toEqual({ status: 'acknowledged', ack_note: 'bank confirmed a missing fee line' });
    // The same statement in other bytes (the bank's download again, a line break more): the same
    // evidence, so the acknowledged finding stands for it and no second one opens.
    const resent = await importStatement(db, 'sandbox', Buffer.concat([unbalanced('8'), Buffer.from('\r\n')]), 'unbalanced-8-again.sta', { acceptUnbalanced: true });
    expect(resent).toMatchObject({ alreadyImported: false, linesNew: 0, statementsUnbalanced: 1, unbalancedFindings: r.unbalancedFindings });
    expect(await db.sql`select id::int, status::text from discrepancies where kind = 'statement_unbalanced'`).toEqual([{ id: r.unbalancedFindings[0], status: 'acknowledged' }]);
    // That file's very bytes again: already imported, and its line names the finding it reused.
    const resentAgain = await importStatement(db, 'sandbox', Buffer.concat([unbalanced('8'), Buffer.from('\r\n')]), 'unbalanced-8-again.sta', { acceptUnbalanced: true });
    expect(resentAgain).toMatchObject({ alreadyImported: true, statementsUnbalanced: 1, unbalancedFindings: r.unbalancedFindings });
  });

  it('statement import --accept-unbalanced prints the statements not checked and stored unbalanced on the result line', async () => {
    const accept = path.join(dir, 'unbalanced-9.sta');
    const refused = path.join(dir, 'unbalanced-10.sta');
    await writeFile(accept, unbalanced('9'));
    await writeFile(refused, unbalanced('10'));
    const out: string[] = [];
    const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => (out.push(String(c)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const saved = { DATABASE_URL: process.env.DATABASE_URL, LOG_LEVEL: process.env.LOG_LEVEL };
    process.env.DATABASE_URL = db.url;
    process.env.LOG_LEVEL = 'silent';
    try {
      // Its bookings (the same bank references, day and amounts) came with unbalanced-8.sta: linked, not stored twice.
      expect(await command.run(['import', '--accept-unbalanced', accept])).toBe(0);
      expect(await command.run(['import', refused])).toBe(1);
    } finally {
      o.mockRestore();
      e.mockRestore();
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
    const [id] = await db.sql<{ id: number }[]>`select id::int from discrepancies where kind = 'statement_unbalanced' and evidence->>'file_name' = 'unbalanced-9.sta'`;
    expect(out[0]).toBe(
      `${accept}: format mt940, statements 1, lines read 2, lines new 0, already known 0, known from overlapping statements 2, unbalanced, stored with findings ${id!.id}: 1\n`,
    );
    expect(out[2]).toMatch(new RegExp(`^${refused.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: failed: MT940 message 1 \\(:28C: 10\\) does not balance: `));
  });
});
