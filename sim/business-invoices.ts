import type { Business } from './business.js';
import { addLine } from './business-payouts.js';
import type { InvoiceRecord, OrderRecord, PendingDeduction } from './model.js';
import { germanIban } from './parties.js';
import { mulDivRound } from './money.js';
import { factoringPayload, invoicePayload } from './payloads.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from './time.js';

/**
 * A shipped order gets one invoice, or two when it ships in two parts (the second one to five days
 * later): the contract's fixed fee is charged on the order's first invoice, whichever payout pays it.
 */
export function startShipment(b: Business, order: OrderRecord, shippedAt: number): void {
  const split = order.amountCents >= 2n && b.termsRng.chance(b.options.splitShipmentRate);
  if (!split) {
    order.invoiceCount = 1;
    startInvoice(b, order, order.amountCents, 1, shippedAt);
    return;
  }
  order.invoiceCount = 2;
  const first = mulDivRound(order.amountCents, BigInt(b.termsRng.int(30, 70)), 100n);
  const secondShippedAt = shippedAt + b.termsRng.int(DAY_MS, 5 * DAY_MS);
  startInvoice(b, order, first, 1, shippedAt);
  startInvoice(b, order, order.amountCents - first, 2, secondShippedAt);
}

/**
 * An invoice for a shipment: factoring (the provider buys it, which makes it payable in the next
 * payout), maybe a credit note, the buyer's payment (sometimes late, sometimes in two parts), and
 * completion, which moves the order to `complete` (a state with no webhook topic). A few invoices
 * are reopened and completed again; a few whose factoring was declined are canceled.
 */
function startInvoice(b: Business, order: OrderRecord, grossCents: bigint, orderInvoiceIndex: number, shippedAt: number): void {
  const createdAt = shippedAt + b.rng.int(MINUTE_MS, 20 * MINUTE_MS);
  const invoice: InvoiceRecord = {
    uuid: b.rng.uuid(),
    externalReferenceId: b.reference('INV', 'invoice'),
    order,
    grossCents,
    createdAt,
    factoringState: 'none',
    paidOutBy: null,
    canceled: false,
    paymentMethod: b.termsRng.chance(b.options.directDebitRate) ? 'direct_debit' : 'bank_transfer',
    paymentTermsDays: order.netTermDays,
    orderInvoiceIndex,
    approvedAt: null,
    canceledAt: null,
    completedPayouts: [],
    fault: 'none',
  };
  b.schedule(createdAt, () => {
    b.invoices.push(invoice);
    emitInvoice(b, invoice, 'invoice/created', createdAt);
  });
  const factoringAt = createdAt + b.rng.int(5 * MINUTE_MS, 3 * HOUR_MS);
  const path = b.rng.weighted([['approved', 80], ['review', 15], ['declined', 5]] as const);
  const factoringUuid = b.rng.uuid();
  let decidedAt = factoringAt;
  let approved = path === 'approved';
  if (path === 'review') {
    b.schedule(factoringAt, () => emitFactoring(b, invoice, factoringUuid, 'factoring/pending', 'manual_review', factoringAt));
    decidedAt = factoringAt + b.rng.int(2 * HOUR_MS, DAY_MS);
    approved = b.rng.chance(0.85);
  }
  const finalAt = decidedAt;
  b.schedule(finalAt, () =>
    approved
      ? emitFactoring(b, invoice, factoringUuid, 'factoring/approved', 'approved', finalAt)
      : emitFactoring(b, invoice, factoringUuid, 'factoring/declined', 'declined', finalAt),
  );
  if (!approved && b.rng.chance(0.5)) {
    const canceledAt = finalAt + b.rng.int(DAY_MS, 3 * DAY_MS);
    b.schedule(canceledAt, () => {
      invoice.canceled = true;
      invoice.canceledAt = canceledAt;
      invoice.fault = b.hooks.invoiceFault('canceled');
      emitInvoice(b, invoice, 'invoice/canceled', canceledAt);
    });
    return;
  }
  let outstanding = invoice.grossCents;
  // provider-merchant-docs.md, "Invoices": no credit note once an invoice is complete. The buyer pays
  // the reduced amount after the credit note, so the credit note always precedes completion.
  let creditAt: number | undefined;
  if (approved && b.rng.chance(0.1)) {
    creditAt = finalAt + b.rng.int(DAY_MS, 4 * DAY_MS);
    const credit = mulDivRound(invoice.grossCents, BigInt(b.rng.int(5, 30)), 100n);
    outstanding -= credit;
    const issuedAt = creditAt;
    b.schedule(issuedAt, () => b.pendingDeductions.push({ docType: 'credit_note', docNo: b.reference('CN', 'credit-note'), invoice, amountCents: credit }));
  }
  if (approved && b.termsRng.chance(b.options.disputeRate)) {
    // A buyer's dispute has a 21-day response window; lost, it is deducted from the next payout after it.
    const decidedAgainst = finalAt + b.termsRng.int(DAY_MS, 10 * DAY_MS) + 21 * DAY_MS;
    const disputed = mulDivRound(invoice.grossCents, BigInt(b.termsRng.int(20, 100)), 100n);
    b.schedule(decidedAgainst, () => b.pendingDeductions.push({ docType: 'dispute', docNo: invoice.externalReferenceId, invoice, amountCents: disputed }));
  }
  const dueAt = createdAt + order.netTermDays * DAY_MS;
  let paidAt: number;
  if (b.rng.chance(0.12)) {
    b.schedule(dueAt, () => emitInvoice(b, invoice, 'invoice/late', dueAt));
    paidAt = dueAt + b.rng.int(DAY_MS, 10 * DAY_MS);
  } else {
    paidAt = createdAt + b.rng.int(DAY_MS, order.netTermDays * DAY_MS);
  }
  // No draw added for the credit note's lead (an hour): the business's stream, and so every other
  // order and invoice of a seed, stays as it was.
  const completeAt = schedulePayment(b, invoice, outstanding, Math.max(paidAt, finalAt + MINUTE_MS, (creditAt ?? 0) + HOUR_MS));
  b.schedule(completeAt, () => {
    order.completedInvoices += 1;
    if (order.completedInvoices === order.invoiceCount) b.setOrderState(order, 'complete', completeAt);
  });
  if (b.rng.chance(0.04)) {
    const reopenedAt = completeAt + b.rng.int(DAY_MS, 3 * DAY_MS);
    b.schedule(reopenedAt, () => emitInvoice(b, invoice, 'invoice/reopened', reopenedAt));
    schedulePayment(b, invoice, outstanding, reopenedAt + b.rng.int(DAY_MS, 4 * DAY_MS));
  }
}

/** One or two invoice/payment events, then invoice/complete; returns the completion time. */
function schedulePayment(b: Business, invoice: InvoiceRecord, amount: bigint, at: number): number {
  const parts = b.rng.chance(0.15) && amount > 1n ? [amount / 2n, amount - amount / 2n] : [amount];
  let when = at;
  parts.forEach((part, i) => {
    if (i > 0) when += b.rng.int(HOUR_MS, 2 * DAY_MS);
    const paymentAt = when;
    b.schedule(paymentAt, () => emitInvoice(b, invoice, 'invoice/payment', paymentAt, part));
  });
  const completeAt = when + b.rng.int(SECOND_MS, MINUTE_MS);
  b.schedule(completeAt, () => emitInvoice(b, invoice, 'invoice/complete', completeAt));
  return completeAt;
}

function emitInvoice(b: Business, invoice: InvoiceRecord, topic: string, at: number, amountCents?: bigint): void {
  const eventTime = b.eventTime(at);
  b.emit({
    at,
    topic,
    entityType: 'invoice',
    entityId: invoice.uuid,
    externalReferenceId: invoice.externalReferenceId,
    eventTime,
    payload: invoicePayload({
      topic,
      invoiceUuid: invoice.uuid,
      orderUuid: invoice.order.uuid,
      externalReferenceId: invoice.externalReferenceId,
      eventTime,
      ...(topic === 'invoice/complete' ? { grossAmountCents: invoice.grossCents } : {}),
      ...(amountCents !== undefined ? { amountCents } : {}),
    }),
  });
}

function emitFactoring(
  b: Business,
  invoice: InvoiceRecord,
  factoringUuid: string,
  topic: 'factoring/approved' | 'factoring/pending' | 'factoring/declined',
  state: 'approved' | 'manual_review' | 'declined',
  at: number,
): void {
  invoice.factoringState = state;
  if (state === 'approved') {
    invoice.approvedAt = at;
    invoice.fault = b.hooks.invoiceFault('approved');
    if (invoice.fault === 'buyer_paid_directly') buyerPaysMerchant(b, invoice, at);
    if (invoice.fault === 'invoice_not_paid_out') b.hooks.record({ fault: 'invoice_not_paid_out', env: b.env, invoice });
  }
  b.emit({
    at,
    topic,
    entityType: 'factoring',
    entityId: factoringUuid,
    externalReferenceId: invoice.externalReferenceId,
    eventTime: null,
    payload: factoringPayload({
      topic,
      factoringUuid,
      invoiceExternalReferenceId: invoice.externalReferenceId,
      factoringState: state,
      invoiceAmountCents: invoice.grossCents,
      paymentMethod: invoice.paymentMethod,
      paymentTermsDays: invoice.paymentTermsDays,
      ...(state === 'approved' ? { invoiceUuid: invoice.uuid, bankAccount: invoice.order.bankAccount } : {}),
    }),
  });
}

/**
 * The buyer pays the merchant instead of the provider: a bank credit from the buyer naming the
 * invoice's reference, which the merchant reports; the provider deducts it from a later payout as a
 * buyer payment. The provider's own invoice events go on as before (it learns of the payment).
 */
function buyerPaysMerchant(b: Business, invoice: InvoiceRecord, approvedAt: number): void {
  const d = b.hooks.invoiceFaultDetails;
  const creditAt = approvedAt + d.int(DAY_MS, 6 * DAY_MS);
  const reportedAt = creditAt + d.int(DAY_MS, 3 * DAY_MS);
  const payer = invoice.order.buyer;
  const payerIban = germanIban(d);
  const deduction: PendingDeduction = { docType: 'buyer_payment', docNo: invoice.externalReferenceId, invoice, amountCents: invoice.grossCents };
  b.schedule(creditAt, () => {
    deduction.line = addLine(b, {
      bookedAt: creditAt,
      amountCents: invoice.grossCents,
      counterpartyName: `${payer.companyName} ${payer.legalForm}`,
      counterpartyIban: payerIban,
      reference: '',
      remittance: `Rechnung ${invoice.externalReferenceId} ${invoice.order.externalReferenceId}`,
    });
    b.buyerPayments.push(deduction);
    b.hooks.record({ fault: 'buyer_paid_directly', env: b.env, invoice, deduction });
  });
  b.schedule(reportedAt, () => b.pendingDeductions.push(deduction));
}
