import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FAULTS, type FaultRates } from '../../sim/options.js';
import { startSimulator, type Simulator } from '../../sim/simulator.js';
import { DAY_MS } from '../../sim/time.js';
import type { Env, GroundTruth } from '../../sim/index.js';
import { parseRows, readCsv, readXlsx, type ParsedRow } from './payout-report-files.js';

/**
 * Payout reports against the payout events, the factoring events and the bank statement, judged by
 * an independent reading of the files and the spec's arithmetic under the default contract
 * (bank transfer at 30 days 2.5 %, other bank transfer 2.9 %, anything else 3.0 %, fixed fee 0.30 on
 * an order's first invoice to appear in a report, VAT 19 % on discount plus fee).
 */

const ENVS: Env[] = ['sandbox', 'production'];
const DAYS = 36;

function contractRate(method: string, terms: number): bigint {
  if (method === 'bank_transfer') return terms === 30 ? 25_000n : 29_000n;
  return 30_000n;
}
const round = (value: bigint, micros: bigint) => (value * micros * 2n + 1_000_000n) / 2_000_000n;

interface Payout { env: Env; uuid: string; sepa: string; amount: bigint; refs: string[]; at: string; complete: boolean }
interface Invoice { uuid: string; ref: string; orderUuid: string; method?: string; terms?: number; approved: boolean; canceledAt?: string }

interface Audit {
  payouts: Payout[];
  reports: Map<string, { payout: Payout; rows: ParsedRow[]; header: string[] }>;
  /** (env|invoice uuid|payout uuid) of invoice rows whose deductions differ from the contract */
  deviations: Set<string>;
  deviationValues: Map<string, { discount: bigint; fee: bigint; expectedDiscount: bigint; expectedFee: bigint }>;
  reportMismatch: Map<string, bigint>;
  paidTwice: Set<string>;
  notPaidOut: Set<string>;
  canceledPaid: Set<string>;
  buyerDirect: Map<string, boolean>;
  unreportedPayouts: string[];
  docTypes: Set<string>;
  rates: Set<number>;
  fees: Set<bigint>;
}

async function audit(sim: Simulator, dir: string): Promise<Audit> {
  const a: Audit = {
    payouts: [], reports: new Map(), deviations: new Set(), deviationValues: new Map(), reportMismatch: new Map(), paidTwice: new Set(), notPaidOut: new Set(),
    canceledPaid: new Set(), buyerDirect: new Map(), unreportedPayouts: [], docTypes: new Set(), rates: new Set(), fees: new Set(),
  };
  const files = new Set(await readdir(dir));
  for (const env of ENVS) {
    const invoices = new Map<string, Invoice>();
    const orderRefs = new Map<string, string>();
    // Each order's invoice created first: the contract's fixed fee is charged on its row, in
    // whichever payout it comes (docs/contract-terms.md).
    const firstCreated = new Map<string, { ref: string; at: string }>();
    const payouts: Payout[] = [];
    const seenPayouts = new Set<string>();
    for (const d of sim.plannedDeliveries()) {
      if (d.env !== env || d.variant === 'wrong_secret') continue;
      const body = JSON.parse(d.body.toString('utf8'));
      if (d.topic.startsWith('order/')) orderRefs.set(body.order_uuid, body.external_reference_id);
      if (d.topic === 'invoice/created') {
        invoices.set(body.external_reference_id, { uuid: body.invoice_uuid, ref: body.external_reference_id, orderUuid: body.order_uuid, approved: false });
        const known = firstCreated.get(body.order_uuid);
        if (known === undefined || body.event_time < known.at) firstCreated.set(body.order_uuid, { ref: body.external_reference_id, at: body.event_time });
      }
      if (d.topic === 'invoice/canceled') invoices.get(body.external_reference_id)!.canceledAt = body.event_time;
      if (d.topic.startsWith('factoring/')) {
        const invoice = invoices.get(body.invoice_external_reference_id)!;
        invoice.method = body.payment_method;
        invoice.terms = Number(body.payment_terms);
        if (d.topic === 'factoring/approved') invoice.approved = true;
      }
      if (d.topic.startsWith('payout/') && !seenPayouts.has(body.payout_uuid)) {
        seenPayouts.add(body.payout_uuid);
        const refs = String(body.external_reference_ids).split(/[\s,;[\]"]+/).filter((r) => r.length > 0);
        payouts.push({ env, uuid: body.payout_uuid, sepa: body.sepa_instruction_id, amount: BigInt(body.amount_cents), refs, at: body.event_time, complete: d.topic === 'payout/complete' });
      }
    }
    payouts.sort((x, y) => (x.at < y.at ? -1 : 1));
    a.payouts.push(...payouts);
    const byUuid = new Map([...invoices.values()].map((i) => [i.uuid, i]));

    const feeCharged = new Set<string>();
    const listedBy = new Map<string, string[]>();
    const bySepa = new Map<string, Payout[]>();
    for (const p of payouts) if (p.complete) bySepa.set(p.sepa, [...(bySepa.get(p.sepa) ?? []), p]);
    for (const p of payouts.filter((x) => x.complete)) {
      for (const ref of p.refs) if (invoices.has(ref)) listedBy.set(ref, [...(listedBy.get(ref) ?? []), p.uuid]);
      const name = `${env}-payout-${p.sepa}`;
      const sharers = bySepa.get(p.sepa)!;
      if (!files.has(`${name}.csv`) || !files.has(`${name}.xlsx`)) {
        if (sharers[0] === p) a.unreportedPayouts.push(`${env} ${p.uuid}`);
        continue;
      }
      const csv = readCsv(await readFile(path.join(dir, `${name}.csv`), 'utf8'));
      const decimal = (await readFile(path.join(dir, `${name}.csv`), 'utf8')).split('\r\n')[0]!.includes(';') ? ',' : '.';
      const { header, rows } = parseRows(csv, decimal);
      const xlsx = parseRows(readXlsx(await readFile(path.join(dir, `${name}.xlsx`))), decimal);
      expect(xlsx.header, name).toEqual(header);
      expect(xlsx.rows, name).toEqual(rows);
      // With two payouts under one SEPA reference, the file names its payout by uuid.
      if (sharers.length > 1) {
        if (rows[0]?.reference !== p.uuid) continue;
      } else if (rows[0]?.reference !== null && rows[0]?.reference !== undefined) {
        expect([p.sepa, p.uuid], name).toContain(rows[0].reference);
      }
      a.reports.set(p.uuid, { payout: p, rows, header });
      const sum = rows.reduce((s, r) => s + r.transfer, 0n);
      const invoiceDocs = rows.filter((r) => r.docType === 'invoice').map((r) => r.docNo).sort();
      if (sum !== p.amount || JSON.stringify(invoiceDocs) !== JSON.stringify([...p.refs].sort())) a.reportMismatch.set(`${env}|${p.uuid}`, sum);
      for (const r of rows) {
        a.docTypes.add(r.docType);
        expect(r.discountRate, name).toBe(r.mdrRate);
        if (r.docType !== 'invoice') {
          expect(r.amount, `${name} ${r.docNo}`).toBeLessThan(0n);
          expect([r.gross, r.transfer, r.discount, r.fee, r.vat, r.total]).toEqual([r.amount, r.amount, 0n, 0n, 0n, 0n]);
          continue;
        }
        const invoice = invoices.get(r.docNo);
        if (!invoice) {
          // A reference no invoice has (the payout_unknown_invoice fault): listed, nothing paid for it.
          expect([r.amount, r.transfer], `${name} ${r.docNo}`).toEqual([0n, 0n]);
          continue;
        }
        expect(r.orderNo).toBe(orderRefs.get(invoice.orderUuid));
        expect(r.gross).toBe(r.amount);
        const first = firstCreated.get(invoice.orderUuid)?.ref === invoice.ref && !feeCharged.has(invoice.orderUuid);
        if (first) feeCharged.add(invoice.orderUuid);
        const rate = contractRate(invoice.method!, invoice.terms!);
        const expectedDiscount = round(r.amount, rate);
        const expectedFee = first ? 30n : 0n;
        a.rates.add(r.mdrRate);
        a.fees.add(r.fee);
        // The row is internally consistent whatever it charged: VAT on discount plus fee, totals, transfer.
        expect(r.vat, `${name} ${r.docNo}`).toBe(round(r.discount + r.fee, 190_000n));
        expect(r.total).toBe(r.discount + r.fee + r.vat);
        expect(r.transfer).toBe(r.amount - r.total);
        if (r.discount !== expectedDiscount || r.fee !== expectedFee || BigInt(r.mdrRate) !== rate) {
          const key = `${env}|${invoice.uuid}|${p.uuid}`;
          a.deviations.add(key);
          a.deviationValues.set(key, { discount: r.discount, fee: r.fee, expectedDiscount, expectedFee });
        }
      }
    }
    const end = new Date(sim.now()).toISOString();
    for (const invoice of invoices.values()) {
      const listed = listedBy.get(invoice.ref) ?? [];
      // Paid twice: listed by completed payouts of two transfers (SEPA references); a duplicate-SEPA pair is one.
      if (new Set(listed.map((uuid) => payouts.find((p) => p.uuid === uuid)!.sepa)).size >= 2) a.paidTwice.add(`${env}|${invoice.uuid}`);
      if (invoice.approved && !invoice.canceledAt && listed.length === 0) a.notPaidOut.add(`${env}|${invoice.uuid}`);
      if (invoice.canceledAt && listed.some((uuid) => payouts.find((p) => p.uuid === uuid)!.at > invoice.canceledAt!)) a.canceledPaid.add(`${env}|${invoice.uuid}`);
    }
    void end;
    void byUuid;

    const statement = readCsv(await readFile(path.join(dir, `${env}-statement.csv`), 'utf8'));
    const [head, ...lines] = statement;
    const col = (name: string) => head!.indexOf(name);
    const deducted = new Set([...a.reports.values()].filter((r) => r.payout.env === env).flatMap((r) => r.rows.filter((x) => x.docType === 'buyer_payment').map((x) => x.docNo)));
    for (const line of lines) {
      if (line[col('counterparty_iban')] === sim.bank[env].providerIban || line[col('credit_debit')] !== 'CRDT') continue;
      const named = (line[col('remittance_information')] ?? '').split(' ').find((word) => invoices.has(word));
      if (named) a.buyerDirect.set(`${env}|${line[col('entry_reference')]}`, deducted.has(named));
    }
  }
  return a;
}

const keysOf = (truth: GroundTruth, kind: string) => new Set(truth.discrepancies.filter((d) => d.kind === kind).map((d) => `${d.environment}|${d.entity_id}${kind === 'payout_deduction_mismatch' ? `|${d.subject}` : ''}`));

async function run(seed: string, faults: Partial<FaultRates>, days = DAYS) {
  const sim = await startSimulator({ seed, faults, business: { ordersPerDay: 24, disputeRate: 0.1 } });
  await sim.advance(days * DAY_MS);
  const dir = await mkdtemp(path.join(tmpdir(), 'sim-reports-'));
  const written = await sim.writePayoutReports(dir);
  await sim.writeStatements(dir);
  return { sim, dir, written };
}

describe('payout reports with no fault', () => {
  let clean: Awaited<ReturnType<typeof run>>;
  let a: Audit;
  beforeAll(async () => {
    clean = await run('reports-clean', NO_FAULTS);
    a = await audit(clean.sim, clean.dir);
  }, 120_000);
  afterAll(async () => {
    await clean.sim.stop();
    await rm(clean.dir, { recursive: true, force: true });
  });

  it('one CSV and one XLSX per completed payout, carrying the same rows', () => {
    const complete = a.payouts.filter((p) => p.complete);
    expect(complete.length).toBeGreaterThan(40);
    expect(a.payouts.length).toBeLessThan(50_000);
    expect(a.unreportedPayouts).toEqual([]);
    expect(a.reports.size).toBe(complete.length);
    expect(clean.written.length).toBe(2 * complete.length);
    expect(clean.written.filter((f) => f.endsWith('.csv')).length).toBe(complete.length);
  });

  it('agree with the payout events: transfers add up to amount_cents, invoice rows are external_reference_ids', () => {
    expect(a.reportMismatch).toEqual(new Map());
    expect(a.paidTwice).toEqual(new Set());
    expect(a.canceledPaid).toEqual(new Set());
    expect(a.buyerDirect).toEqual(new Map());
    // Every factored invoice is paid out, but those factored after the last payout run.
    const lastRun = a.payouts.at(-1)!.at;
    for (const key of a.notPaidOut) expect(key, 'a factored invoice no payout lists').toBe(lastRun && key);
    expect(a.notPaidOut.size).toBeLessThan(30);
  });

  it('follow the contract: MDR per payment method and term, the fixed fee once per order, VAT on both', () => {
    expect(a.deviations).toEqual(new Set());
    expect([...a.rates].sort()).toEqual([25_000, 29_000, 30_000]);
    expect([...a.fees].sort()).toEqual([0n, 30n]);
    expect([...a.docTypes].sort()).toEqual(['credit_note', 'dispute', 'invoice']);
  });

  it('agree with the bank: each payout credit carries the report\'s total', async () => {
    for (const env of ENVS) {
      const [head, ...lines] = readCsv(await readFile(path.join(clean.dir, `${env}-statement.csv`), 'utf8'));
      const at = (name: string) => head!.indexOf(name);
      const credits = new Map<string, bigint>();
      for (const line of lines) {
        if (line[at('counterparty_iban')] !== clean.sim.bank[env].providerIban) continue;
        const sepa = (line[at('end_to_end_reference')] || line[at('remittance_information')]!.split(' ').at(-1))!;
        credits.set(sepa, BigInt(line[at('amount')]!.replace('.', '')));
      }
      for (const { payout, rows } of a.reports.values()) {
        if (payout.env !== env) continue;
        expect(credits.get(payout.sepa), payout.sepa).toBe(rows.reduce((s, r) => s + r.transfer, 0n));
      }
    }
    expect(clean.sim.groundTruth().discrepancies).toEqual([]);
  });
});

describe('payout reports with every invoice-to-cash fault on', () => {
  let faulty: Awaited<ReturnType<typeof run>>;
  let a: Audit;
  let truth: GroundTruth;
  beforeAll(async () => {
    faulty = await run('reports-faults', {
      invoiceNotPaidOut: 0.05, invoicePaidOutTwice: 0.05, feeOvercharged: 0.05, fixedFeeTwice: 0.4, canceledInvoicePaid: 0.4, buyerPaidDirectly: 0.05,
      payoutReportMismatch: 0.25, payoutDuplicateSepa: 0.1, payoutCancelledCredited: 0.1, payoutUnknownInvoice: 0.1,
    });
    a = await audit(faulty.sim, faulty.dir);
    truth = faulty.sim.groundTruth();
  }, 120_000);
  afterAll(async () => {
    await faulty.sim.stop();
    await rm(faulty.dir, { recursive: true, force: true });
  });

  it('a row charged off the contract is exactly a payout_deduction_mismatch of the ground truth, with its values', () => {
    const expected = keysOf(truth, 'payout_deduction_mismatch');
    expect(new Set(truth.discrepancies.filter((d) => d.kind === 'payout_deduction_mismatch').map((d) => d.fault))).toEqual(new Set(['fee_overcharged', 'fixed_fee_twice']));
    expect(a.deviations).toEqual(expected);
    for (const d of truth.discrepancies.filter((x) => x.kind === 'payout_deduction_mismatch')) {
      const seen = a.deviationValues.get(`${d.environment}|${d.entity_id}|${d.subject}`)!;
      if (d.fault === 'fee_overcharged') expect([seen.expectedDiscount, seen.discount].map(String)).toEqual([d.expected, d.observed]);
      else expect([seen.expectedFee, seen.fee].map(String)).toEqual([d.expected, d.observed]);
    }
  });

  it('a report that disagrees with its payout is exactly a payout_report_mismatch, and carries a payout reference', () => {
    const expected = keysOf(truth, 'payout_report_mismatch');
    expect(expected.size).toBeGreaterThan(0);
    expect(new Set(a.reportMismatch.keys())).toEqual(expected);
    for (const d of truth.discrepancies.filter((x) => x.kind === 'payout_report_mismatch')) {
      expect(a.reportMismatch.get(`${d.environment}|${d.entity_id}`)?.toString()).toBe(d.observed);
      const report = a.reports.get(d.entity_id)!;
      expect(report.rows[0]!.reference).toBe(report.payout.sepa);
    }
  });

  it('invoices paid twice, never, or though canceled are exactly the ground truth\'s', () => {
    const twice = keysOf(truth, 'invoice_paid_out_twice');
    expect(new Set(truth.discrepancies.filter((d) => d.kind === 'invoice_paid_out_twice').map((d) => d.fault))).toEqual(new Set(['invoice_paid_out_twice']));
    expect(a.paidTwice).toEqual(twice);
    const canceled = keysOf(truth, 'payout_pays_canceled_invoice');
    expect(canceled.size).toBeGreaterThan(0);
    expect(a.canceledPaid).toEqual(canceled);
    // Invoices factored after the last payout run wait for the next one: not (yet) a finding.
    const notPaid = keysOf(truth, 'invoice_not_paid_out');
    expect(new Set(truth.discrepancies.filter((d) => d.kind === 'invoice_not_paid_out').map((d) => d.fault))).toEqual(new Set(['invoice_not_paid_out', 'payout_cancelled_credited']));
    for (const key of notPaid) expect(a.notPaidOut.has(key), key).toBe(true);
    // Each says since when it was payable: a reconciler reports it INVOICE_PAYOUT_DAYS after that.
    for (const d of truth.discrepancies.filter((x) => x.kind === 'invoice_not_paid_out')) expect(Date.parse(`${d.payable_since}`)).toBeLessThan(faulty.sim.now());
    expect(a.notPaidOut.size - notPaid.size).toBeLessThan(30);
  });

  it('a buyer paying the merchant is a bank credit naming the invoice, resolved once a report deducts it', () => {
    const expected = truth.discrepancies.filter((d) => d.kind === 'buyer_paid_merchant_directly');
    expect(expected.length).toBeGreaterThan(0);
    expect(new Set(a.buyerDirect.keys())).toEqual(keysOf(truth, 'buyer_paid_merchant_directly'));
    for (const d of expected) expect(a.buyerDirect.get(`${d.environment}|${d.entity_id}`) ? 'resolved' : 'open').toBe(d.status);
    expect(expected.some((d) => d.status === 'resolved')).toBe(true);
    expect(a.docTypes.has('buyer_payment')).toBe(true);
  });
});

describe('report forms', () => {
  it('vary by seed: decimal comma with ;, decimal point with ,, with and without a payout reference, currency marks', async () => {
    const seen = { semicolon: 0, comma: 0, reference: 0, noReference: 0, currencyMark: 0, numbersInXlsx: 0, textInXlsx: 0 };
    for (const seed of ['f1', 'f2', 'f3', 'f4', 'f5', 'f6']) {
      const { sim, dir } = await run(seed, NO_FAULTS, 2);
      try {
        const csv = (await readdir(dir)).filter((f) => /-payout-.*\.csv$/.test(f));
        expect(csv.length).toBeGreaterThan(0);
        for (const file of csv) {
          const text = await readFile(path.join(dir, file), 'utf8');
          const header = text.split('\r\n')[0]!;
          if (header.includes(';')) seen.semicolon++;
          else seen.comma++;
          // A decimal comma goes with ; (amounts like 1.234,56), a decimal point with ,
          const [head, first] = readCsv(text);
          const amount = first![head!.findIndex((h) => /transaction.amount/i.test(h))]!;
          expect(amount, file).toMatch(header.includes(';') ? /,\d\d\D*$/ : /\.\d\d\D*$/);
          if (/payout|sepa/i.test(header)) seen.reference++;
          else seen.noReference++;
          if (/€|EUR/.test(text.split('\r\n').slice(1).join(''))) seen.currencyMark++;
          const xlsx = readXlsx(await readFile(path.join(dir, file.replace(/\.csv$/, '.xlsx'))));
          if (xlsx[1]!.some((c) => c.type === 'number')) seen.numbersInXlsx++;
          else seen.textInXlsx++;
        }
      } finally {
        await sim.stop();
        await rm(dir, { recursive: true, force: true });
      }
    }
    for (const [form, count] of Object.entries(seen)) expect(count, form).toBeGreaterThan(0);
  }, 120_000);

  it('a seed reproduces its reports: CSV byte for byte, XLSX cell for cell', async () => {
    const read = async () => {
      const { sim, dir, written } = await run('reports-det', { feeOvercharged: 0.2, payoutReportMismatch: 0.3 }, 8);
      try {
        return await Promise.all(written.map(async (f) => `${path.basename(f)}\n${f.endsWith('.csv') ? await readFile(f, 'utf8') : JSON.stringify(readXlsx(await readFile(f)))}`));
      } finally {
        await sim.stop();
        await rm(dir, { recursive: true, force: true });
      }
    };
    const first = await read();
    expect(first.length).toBeGreaterThan(10);
    expect(await read()).toEqual(first);
  }, 120_000);

  it('CSV only, XLSX only', async () => {
    const { sim, dir } = await run('reports-formats', NO_FAULTS, 3);
    try {
      const csv = await sim.writePayoutReports(path.join(dir, 'csv'), { format: 'csv' });
      const xlsx = await sim.writePayoutReports(path.join(dir, 'xlsx'), { format: 'xlsx' });
      expect(csv.length).toBeGreaterThan(0);
      expect(csv.every((f) => f.endsWith('.csv'))).toBe(true);
      expect(xlsx.map((f) => path.basename(f, '.xlsx'))).toEqual(csv.map((f) => path.basename(f, '.csv')));
    } finally {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('credit notes', () => {
  /**
   * provider-merchant-docs.md, "Invoices": "No credit note can be issued once an invoice is complete".
   * A credit note reaches the merchant only as a payout report row, and the daily run deducts every
   * credit note pending at its time: one first deducted by the run of day D, when the run of day D-1
   * completed too, was issued after D-1's run. If its (only) invoice was complete before D-1's run,
   * the provider issued a credit note on a complete invoice.
   */
  it('are never issued on an invoice that is already complete', async () => {
    const sim = await startSimulator({ seed: 3, business: { ordersPerDay: 100 } });
    const dir = await mkdtemp(path.join(tmpdir(), 'sim-credit-notes-'));
    try {
      await sim.advance(14 * DAY_MS);
      const orderUuid = new Map<string, string>();
      const invoices = new Map<string, number>();
      const completedAt = new Map<string, number>();
      for (const d of sim.plannedDeliveries()) {
        if (d.env !== 'sandbox') continue;
        const p = JSON.parse(d.body.toString('utf8')) as Record<string, string>;
        if (d.topic.startsWith('order/')) orderUuid.set(p.external_reference_id!, p.order_uuid!);
        if (d.topic === 'invoice/created') invoices.set(p.order_uuid!, (invoices.get(p.order_uuid!) ?? 0) + 1);
        if (d.topic === 'invoice/complete' && !completedAt.has(p.order_uuid!)) completedAt.set(p.order_uuid!, Date.parse(`${p.event_time!.slice(0, 23)}Z`));
      }
      const files = (await sim.writePayoutReports(dir, { format: 'csv' })).filter((f) => path.basename(f).startsWith('sandbox-'));
      const runOf = (f: string) => {
        const m = /PO(\d{4})(\d{2})(\d{2})/.exec(path.basename(f)) as RegExpExecArray;
        return Date.parse(`${m[1]}-${m[2]}-${m[3]}T06:00:00Z`);
      };
      const runs = new Set(files.map(runOf));
      let checked = 0;
      const late: string[] = [];
      for (const file of files) {
        const run = runOf(file);
        if (!runs.has(run - DAY_MS)) continue;
        const [head, ...rows] = readCsv(await readFile(file, 'utf8'));
        const header = head!.map((h) => h.toLowerCase().replaceAll('_', ' '));
        const [orderNo, docNo, docType] = ['order no', 'doc no', 'doc type'].map((h) => header.indexOf(h)) as [number, number, number];
        for (const cells of rows) {
          if (cells[docType]!.toLowerCase().replaceAll('_', ' ') !== 'credit note') continue;
          const order = orderUuid.get(cells[orderNo]!);
          if (order === undefined || invoices.get(order) !== 1) continue;
          checked += 1;
          const done = completedAt.get(order);
          if (done !== undefined && done < run - DAY_MS) late.push(`${cells[docNo]} (order ${cells[orderNo]}): invoice complete ${new Date(done).toISOString()}, credit note first deducted by the run of ${new Date(run).toISOString()}`);
        }
      }
      expect(checked).toBeGreaterThan(10);
      expect(late).toEqual([]);
    } finally {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
