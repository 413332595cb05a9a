import type { Business } from './business.js';
import { invoiceDeductions, mdrMicros } from './contract.js';
import type { BankLine, InvoiceRecord, OrderRecord, PayoutRecord, PayoutReportRow, PendingDeduction } from './model.js';
import { germanIban, UNRELATED_CREDITORS, UNRELATED_PAYERS } from './parties.js';
import { payoutPayload } from './payloads.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, isoDate } from './time.js';

/**
 * The daily payout run: one transfer covers every factored invoice not yet paid out, net of the
 * contract's deductions (MDR, fixed fee per order, VAT on both unless vat_on_fixed_fee is false) and of the credit notes, buyers'
 * direct payments and lost disputes since the last run, exactly as its payout report shows. Its SEPA instruction id is the reference on the merchant's bank statement.
 * Payout faults are drawn from the fault stream here because they shape both the events and the
 * bank statement.
 */
export function startPayoutsAndBank(b: Business): void {
  const firstDay = Math.floor(b.start / DAY_MS) * DAY_MS;
  // payoutRunsPerDay runs, evenly spaced from payoutHourUtc; the first one after the start.
  const every = DAY_MS / b.options.payoutRunsPerDay;
  let payoutAt = firstDay + b.options.payoutHourUtc * HOUR_MS - DAY_MS;
  while (payoutAt <= b.start) payoutAt += every;
  schedulePayoutRun(b, payoutAt, every);
  scheduleBankDay(b, firstDay);
}

function schedulePayoutRun(b: Business, at: number, every: number): void {
  b.schedule(at, () => {
    payoutRun(b, at);
    schedulePayoutRun(b, at + every, every);
  });
}

/** Invoices the next payout lists: factored and not yet paid out, plus what an invoice fault adds or withholds. */
function payable(i: InvoiceRecord, completing: boolean): boolean {
  if (i.fault === 'invoice_paid_out_twice' && i.completedPayouts.length === 1) return completing;
  if (i.paidOutBy !== null) return false;
  if (i.canceled) return i.fault === 'canceled_invoice_paid' && completing;
  return i.factoringState === 'approved' && i.fault !== 'invoice_not_paid_out';
}

function payoutRun(b: Business, at: number): void {
  if (!b.invoices.some((i) => payable(i, true))) return;
  // A payout the provider itself cancels (bank details rejected): no credit, invoices wait for the next run.
  const cancelledByProvider = b.rng.chance(0.02);
  const fault = cancelledByProvider ? 'none' : b.hooks.payoutFault();
  // An invoice a fault pays (again, or though canceled) waits for a payout that completes, so its
  // finding is exact.
  const completing = !cancelledByProvider && fault !== 'payout_cancelled_credited';
  const included = b.invoices.filter((i) => payable(i, completing));
  if (included.length === 0) return;
  const built = buildRows(b, included, completing);
  const deductions = b.pendingDeductions.splice(0);
  const rows = [...built.rows, ...deductions.map(deductionRow)];
  const amount = rows.reduce((sum, row) => sum + row.transferAmountCents, 0n);
  if (amount <= 0n) {
    b.pendingDeductions.push(...deductions);
    return;
  }
  const payout: PayoutRecord = {
    uuid: b.rng.uuid(),
    sepaInstructionId: sepaReference(b, at),
    amountCents: amount,
    externalReferenceIds: included.map((i) => i.externalReferenceId),
    at,
    status: 'complete',
    report: null,
  };
  b.payouts.push(payout);
  const creditAt = at + b.rng.int(2 * HOUR_MS, 20 * HOUR_MS);

  if (cancelledByProvider) {
    payout.status = 'cancelled';
    b.pendingDeductions.push(...deductions);
    emitPayout(b, payout, at);
    return;
  }
  for (const invoice of included) if (invoice.paidOutBy === null) invoice.paidOutBy = payout.uuid;
  payout.report = { rows, reference: null };
  switch (fault) {
    case 'payout_amount_mismatch': {
      const delta = BigInt(b.rng.int(1, 5000)) * (b.rng.chance(0.5) && amount > 5000n ? -1n : 1n);
      const line = creditLine(b, payout, creditAt, amount + delta);
      b.hooks.record({ fault, env: b.env, payout, line });
      break;
    }
    case 'payout_no_credit':
      b.hooks.record({ fault, env: b.env, payout });
      break;
    case 'payout_unknown_invoice': {
      const unknownReference = `INV-${String(900_000 + b.nextNumber('unknown-invoice')).padStart(6, '0')}`;
      payout.externalReferenceIds.push(unknownReference);
      // The report lists every document the payout names; the provider pays nothing for this one.
      rows.splice(built.rows.length, 0, { ...deductionRow({ docType: 'credit_note', docNo: unknownReference, invoice: null, amountCents: 0n }), docType: 'invoice', orderNo: '' });
      creditLine(b, payout, creditAt, amount);
      b.hooks.record({ fault, env: b.env, payout, unknownReference });
      break;
    }
    case 'payout_duplicate_sepa': {
      creditLine(b, payout, creditAt, amount);
      // One report file per SEPA reference: the original's, tied to it by its uuid (the SEPA
      // reference names both payouts); the second payout has none.
      payout.report.reference = 'uuid';
      const second: PayoutRecord = { ...payout, uuid: b.rng.uuid(), externalReferenceIds: [...payout.externalReferenceIds], report: null };
      second.at = at + b.rng.int(MINUTE_MS, 2 * HOUR_MS);
      b.payouts.push(second);
      b.schedule(second.at, () => emitPayout(b, second, second.at));
      b.hooks.record({ fault, env: b.env, payout: second, original: payout, invoices: [...included] });
      break;
    }
    case 'payout_cancelled_credited': {
      payout.status = 'cancelled';
      payout.report = null;
      const line = creditLine(b, payout, creditAt, amount);
      b.hooks.record({ fault, env: b.env, payout, line, invoices: [...included] });
      break;
    }
    case 'payout_report_mismatch': {
      creditLine(b, payout, creditAt, amount);
      // Leaves out one invoice row of a single-invoice order whose own row is clean, so the only
      // finding is the report's disagreement (an order's fixed fee stays on the row it was on).
      // A report must keep a row: a file with none names no payout, and the importer refuses it
      // ("the file holds no rows"), so the disagreement could never be found (a demo under load,
      // whose payout listed one invoice and nothing else, called it unexplained).
      const candidates = built.rows.filter((r) => r.invoice !== null && r.invoice.order.invoiceCount === 1 && r.invoice.fault === 'none');
      if (candidates.length === 0 || rows.length < 2) break;
      const dropped = candidates[b.hooks.invoiceFaultDetails.int(0, candidates.length - 1)] as PayoutReportRow;
      payout.report = { rows: rows.filter((r) => r !== dropped), reference: 'sepa' };
      b.hooks.record({ fault, env: b.env, payout, droppedRow: dropped, reportedCents: amount - dropped.transferAmountCents });
      break;
    }
    case 'none':
      creditLine(b, payout, creditAt, amount);
      break;
  }
  if (payout.status === 'complete') commitRows(b, payout, built, deductions);
  emitPayout(b, payout, at);
}

interface BuiltRows {
  rows: PayoutReportRow[];
  /** orders whose fixed fee these rows charge for the first time */
  feeOrders: Set<OrderRecord>;
  /** invoice faults these rows carry, recorded once the payout completes */
  faults: { row: PayoutReportRow; fault: 'fee_overcharged' | 'fixed_fee_twice'; expectedCents: bigint; observedCents: bigint }[];
  notApplicable: { invoice: InvoiceRecord; details: string }[];
}

/**
 * The invoice rows by the contract (contract.ts): the MDR for the invoice's payment method and
 * terms, the fixed fee on its order's first invoice (the one created first), VAT as vat_on_fixed_fee says. A fee fault
 * is applied only in a payout that completes, so its row is published.
 */
function buildRows(b: Business, included: readonly InvoiceRecord[], completing: boolean): BuiltRows {
  const out: BuiltRows = { rows: [], feeOrders: new Set(), faults: [], notApplicable: [] };
  const fixedFee = BigInt(b.terms.fixed_fee_cents);
  for (const invoice of included) {
    const order = invoice.order;
    // The order's first invoice created (docs/contract-terms.md, as the daemon judges it), in
    // whichever payout it comes: not the first of its invoices to reach a report, which differs
    // when a split shipment's second invoice is paid out before the first.
    const first = invoice.orderInvoiceIndex === 1 && !order.fixedFeeCharged && !out.feeOrders.has(order);
    if (first) out.feeOrders.add(order);
    const rate = mdrMicros(b.terms, invoice.paymentMethod, invoice.paymentTermsDays);
    const faulty = completing && invoice.completedPayouts.length === 0 ? invoice.fault : 'none';
    let chargedRate = rate;
    let fee = first ? fixedFee : 0n;
    if (faulty === 'fee_overcharged') chargedRate = Math.min(1_000_000, rate + 5_000);
    // Charged twice only once it was charged: before the order's first invoice is in a report, a fee
    // on a later one is the only fee the reports show, and which invoice carries it is what the
    // daemon does not judge until the first one's row comes (docs/contract-terms.md).
    const charged = order.fixedFeeCharged || out.feeOrders.has(order);
    const twice = faulty === 'fixed_fee_twice' && !first && fixedFee > 0n && charged;
    if (faulty === 'fixed_fee_twice') {
      if (twice) fee = fixedFee;
      else out.notApplicable.push({ invoice, details: first ? "the order's first invoice: its fixed fee is due" : fixedFee === 0n ? 'the contract has no fixed fee' : "the order's first invoice is in no report yet" });
    }
    const d = invoiceDeductions(invoice.grossCents, chargedRate, fee, b.terms.vat_percent, b.terms.vat_on_fixed_fee);
    const row: PayoutReportRow = {
      orderNo: order.externalReferenceId,
      docNo: invoice.externalReferenceId,
      docType: 'invoice',
      transactionAmountCents: invoice.grossCents,
      rateMicros: chargedRate,
      transactionFeeCents: d.transactionFeeCents,
      grossPurchasePriceCents: invoice.grossCents,
      discountCents: d.discountCents,
      vatOnDiscountCents: d.vatCents,
      transferAmountCents: d.transferCents,
      totalDeductionsCents: d.totalDeductionsCents,
      invoice,
    };
    out.rows.push(row);
    if (faulty === 'fee_overcharged') {
      const fair = invoiceDeductions(invoice.grossCents, rate, fee, b.terms.vat_percent, b.terms.vat_on_fixed_fee);
      out.faults.push({ row, fault: faulty, expectedCents: fair.discountCents, observedCents: d.discountCents });
    } else if (twice) {
      out.faults.push({ row, fault: faulty, expectedCents: 0n, observedCents: fee });
    }
  }
  return out;
}

/** A credit note, buyer payment or dispute: its amount taken off, no fee. */
function deductionRow(d: Pick<PendingDeduction, 'docType' | 'docNo' | 'amountCents'> & { invoice: InvoiceRecord | null }): PayoutReportRow {
  return {
    orderNo: d.invoice?.order.externalReferenceId ?? '',
    docNo: d.docNo,
    docType: d.docType,
    transactionAmountCents: -d.amountCents,
    rateMicros: 0,
    transactionFeeCents: 0n,
    grossPurchasePriceCents: -d.amountCents,
    discountCents: 0n,
    vatOnDiscountCents: 0n,
    transferAmountCents: -d.amountCents,
    totalDeductionsCents: 0n,
    invoice: d.invoice,
  };
}

/** A completed payout's report is published: what it charged and listed becomes history. */
function commitRows(b: Business, payout: PayoutRecord, built: BuiltRows, deductions: readonly PendingDeduction[]): void {
  for (const order of built.feeOrders) order.fixedFeeCharged = true;
  for (const d of deductions) d.deductedBy = payout.uuid;
  for (const row of built.rows) {
    const invoice = row.invoice;
    if (!invoice) continue;
    invoice.completedPayouts.push(payout.uuid);
    if (invoice.fault === 'invoice_paid_out_twice' && invoice.completedPayouts.length === 2) {
      const firstPayout = b.payouts.find((p) => p.uuid === invoice.completedPayouts[0]) as PayoutRecord;
      b.hooks.record({ fault: 'invoice_paid_out_twice', env: b.env, invoice, payouts: [firstPayout, payout] });
    }
    if (invoice.fault === 'canceled_invoice_paid' && invoice.canceled && invoice.completedPayouts.length === 1) {
      b.hooks.record({ fault: 'canceled_invoice_paid', env: b.env, invoice, payout });
    }
  }
  for (const f of built.faults) if (f.row.invoice) b.hooks.record({ fault: f.fault, env: b.env, invoice: f.row.invoice, payout, expectedCents: f.expectedCents, observedCents: f.observedCents });
  for (const n of built.notApplicable) b.hooks.record({ fault: 'invoice_fault_not_applicable', env: b.env, invoice: n.invoice, intended: n.invoice.fault, details: n.details });
}

function emitPayout(b: Business, payout: PayoutRecord, at: number): void {
  const topic = payout.status === 'complete' ? 'payout/complete' : 'payout/cancelled';
  const eventTime = b.eventTime(at);
  b.emit({
    at,
    topic,
    entityType: 'payout',
    entityId: payout.uuid,
    externalReferenceId: null,
    eventTime,
    payload: payoutPayload({
      topic,
      payoutUuid: payout.uuid,
      sepaInstructionId: payout.sepaInstructionId,
      amountCents: payout.amountCents,
      externalReferenceIds: payout.externalReferenceIds,
      eventTime,
    }),
  });
}

function sepaReference(b: Business, at: number): string {
  return `PO${isoDate(at).replaceAll('-', '')}${b.rng.digits(8)}`;
}

function creditLine(b: Business, payout: PayoutRecord, at: number, amount: bigint): BankLine {
  return addLine(b, {
    bookedAt: at,
    amountCents: amount,
    counterpartyName: b.providerName,
    counterpartyIban: b.providerIban,
    reference: payout.sepaInstructionId,
    remittance: `Auszahlung ${payout.sepaInstructionId}`,
  });
}

export function addLine(b: Business, line: Omit<BankLine, 'id'>): BankLine {
  const full: BankLine = { id: `${b.env === 'sandbox' ? 'S' : 'P'}${isoDate(line.bookedAt).replaceAll('-', '')}${String(b.nextNumber('bank-line')).padStart(6, '0')}`, ...line };
  b.bankLines.push(full);
  return full;
}

/** Each day: ordinary credits and debits unrelated to payouts, and maybe a provider credit no payout explains. */
function scheduleBankDay(b: Business, day: number): void {
  b.schedule(day, () => {
    for (let i = 0; i < b.options.unrelatedBankLinesPerDay; i++) {
      const credit = b.rng.chance(0.4);
      const amount = BigInt(b.rng.int(10_00, 2_500_00));
      addLine(b, {
        bookedAt: day + b.rng.int(7 * HOUR_MS, 18 * HOUR_MS),
        amountCents: credit ? amount : -amount,
        counterpartyName: credit ? b.rng.pick(UNRELATED_PAYERS) : b.rng.pick(UNRELATED_CREDITORS),
        counterpartyIban: germanIban(b.rng),
        reference: `RF${b.rng.digits(12)}`,
        remittance: credit ? `Zahlung Rechnung ${b.rng.digits(6)}` : `Lastschrift ${b.rng.digits(8)}`,
      });
    }
    if (b.hooks.creditWithoutPayout()) {
      const sepa = sepaReference(b, day);
      const line = addLine(b, {
        bookedAt: day + b.rng.int(8 * HOUR_MS, 17 * HOUR_MS),
        amountCents: BigInt(b.rng.int(100_00, 20_000_00)),
        counterpartyName: b.providerName,
        counterpartyIban: b.providerIban,
        reference: sepa,
        remittance: `Auszahlung ${sepa}`,
      });
      b.hooks.record({ fault: 'credit_without_payout', env: b.env, line });
    }
    scheduleBankDay(b, day + DAY_MS);
  });
}

