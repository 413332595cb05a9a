import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FAULTS } from '../../sim/options.js';
import { startSimulator, type Simulator } from '../../sim/simulator.js';
import { DAY_MS } from '../../sim/time.js';

let sim: Simulator;
let dir: string;
let files: string[];

beforeAll(async () => {
  sim = await startSimulator({
    seed: 'bank-4',
    faults: { ...NO_FAULTS, payoutAmountMismatch: 0.15, payoutNoCredit: 0.15, payoutUnknownInvoice: 0.1, payoutDuplicateSepa: 0.1, payoutCancelledCredited: 0.1, creditWithoutPayout: 0.5 },
    business: { ordersPerDay: 80 },
  });
  await sim.advance(14 * DAY_MS);
  dir = await mkdtemp(path.join(tmpdir(), 'sim-bank-'));
  files = await sim.writeStatements(dir);
});
afterAll(async () => {
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

/** "1234.56" to 123456n without floats. */
function cents(text: string): bigint {
  const m = /^(-?)(\d+)\.(\d{2})$/.exec(text);
  if (!m) throw new Error(`not a decimal amount: ${text}`);
  const v = BigInt(m[2]!) * 100n + BigInt(m[3]!);
  return m[1] === '-' ? -v : v;
}

interface Entry {
  ref: string;
  amount: bigint;
  sepa: string;
  remittance: string;
}

async function camtEntries(env: 'sandbox' | 'production') {
  const xml = await readFile(files.find((f) => f.endsWith(`${env}-statement.camt053.xml`))!, 'utf8');
  expect(XMLValidator.validate(xml)).toBe(true);
  const doc = new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (name) => name === 'Ntry' || name === 'Bal' }).parse(xml);
  const stmt = doc.Document.BkToCstmrStmt.Stmt;
  const entries: Entry[] = stmt.Ntry.map((n: any) => {
    const amount = cents(n.Amt['#text']);
    expect(n.Amt['@_Ccy']).toBe('EUR');
    return { ref: n.NtryRef, amount: n.CdtDbtInd === 'DBIT' ? -amount : amount, sepa: n.NtryDtls.TxDtls.Refs.EndToEndId, remittance: String(n.NtryDtls.TxDtls.RmtInf?.Ustrd ?? ''), debtorIban: n.NtryDtls.TxDtls.RltdPties?.DbtrAcct?.Id?.IBAN };
  });
  const balance = (code: string) => cents(stmt.Bal.find((b: any) => b.Tp.CdOrPrtry.Cd === code).Amt['#text']);
  return { entries, opening: balance('OPBD'), closing: balance('CLBD'), iban: stmt.Acct.Id.IBAN };
}

describe('bank statements', () => {
  it('CAMT.053 is well-formed and balances exactly; CSV and MT940 carry the same lines', async () => {
    const { entries, opening, closing, iban } = await camtEntries('sandbox');
    expect(iban).toBe(sim.bank.sandbox.merchantIban);
    expect(entries.length).toBeGreaterThan(30);
    expect(entries.some((e) => e.amount < 0n)).toBe(true);
    expect(opening + entries.reduce((s, e) => s + e.amount, 0n)).toBe(closing);

    const csv = (await readFile(path.join(dir, 'sandbox-statement.csv'), 'utf8')).trimEnd().split('\r\n');
    const header = csv[0]!.split(',');
    const rows = csv.slice(1).map((line) => line.split(','));
    expect(rows).toHaveLength(entries.length);
    const amountAt = header.indexOf('amount');
    const refAt = header.indexOf('entry_reference');
    const byRef = new Map(entries.map((e) => [e.ref, e.amount]));
    for (const row of rows) expect(cents(row[amountAt]!)).toBe(byRef.get(row[refAt]!));

    const mt940 = await readFile(path.join(dir, 'sandbox-statement.mt940'), 'utf8');
    expect(mt940.match(/^:61:/gm)).toHaveLength(entries.length);
  });

  it('payout credits follow the payouts and the injected faults to the cent', async () => {
    const { entries } = await camtEntries('sandbox');
    const truth = sim.groundTruth({ environment: 'sandbox' }).discrepancies;
    const faultOf = new Map(truth.filter((d) => d.entity_type === 'payout').map((d) => [d.entity_id, d]));
    const payouts = new Map<string, { sepa: string; amount: bigint; topic: string }>();
    for (const d of sim.plannedDeliveries()) {
      if (d.env !== 'sandbox' || !d.topic.startsWith('payout/')) continue;
      const body = JSON.parse(d.body.toString('utf8'));
      payouts.set(body.payout_uuid, { sepa: body.sepa_instruction_id, amount: BigInt(body.amount_cents), topic: body.topic });
    }
    expect(payouts.size).toBeGreaterThan(8);
    const kinds = new Set<string>();
    for (const [uuid, p] of payouts) {
      // The reference is in the end-to-end id, or (a bank's variant) only in the remittance text.
      const credits = entries.filter((e) => e.sepa === p.sepa || (e.sepa === 'NOTPROVIDED' && e.remittance.split(' ').includes(p.sepa)));
      const fault = faultOf.get(uuid);
      kinds.add(fault?.kind ?? 'none');
      switch (fault?.kind) {
        case 'payout_not_on_statement':
          expect(credits).toHaveLength(0);
          break;
        case 'payout_amount_mismatch':
          expect(credits).toHaveLength(1);
          expect(credits[0]!.amount).toBe(BigInt(fault.observed!));
          expect(credits[0]!.amount).not.toBe(p.amount);
          break;
        case 'payout_cancelled_but_credited':
          expect(p.topic).toBe('payout/cancelled');
          expect(credits.map((c) => c.amount)).toEqual([p.amount]);
          break;
        case 'duplicate_event':
        case 'payout_unknown_invoice':
          expect(credits.map((c) => c.amount)).toEqual([p.amount]);
          break;
        default:
          // A payout the provider cancelled by itself has no credit; every other one has exactly its amount.
          expect(credits.map((c) => c.amount)).toEqual(p.topic === 'payout/cancelled' ? [] : [p.amount]);
      }
    }
    expect(kinds.size).toBeGreaterThanOrEqual(5);
    const knownSepa = new Set([...payouts.values()].map((p) => p.sepa));
    const orphans = truth.filter((d) => d.kind === 'statement_credit_without_payout');
    expect(orphans.length).toBeGreaterThan(0);
    for (const o of orphans) {
      const line = entries.find((e) => e.ref === o.entity_id);
      expect(line?.sepa === 'NOTPROVIDED' ? line.remittance.split(' ').at(-1) : line?.sepa).toBe(o.sepa_reference);
      expect(knownSepa.has(o.sepa_reference!)).toBe(false);
      expect((line as { debtorIban?: string }).debtorIban).toBe(sim.bank.sandbox.providerIban);
    }
  });
});
