import type { Business } from './business.js';
import type { BankLine, PayoutRecord } from './model.js';
import { feeWithVat } from './money.js';
import { germanIban, UNRELATED_CREDITORS, UNRELATED_PAYERS } from './parties.js';
import { payoutPayload } from './payloads.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, isoDate } from './time.js';

/**
 * The daily payout run: one transfer covers every factored invoice not yet paid out, net of the
 * provider's fee, VAT on the fee, and credit notes issued since the last run (as the provider's
 * payout reports show). Its SEPA instruction id is the reference on the merchant's bank statement.
 * Payout faults are drawn from the fault stream here because they shape both the events and the
 * bank statement.
 */
export function startPayoutsAndBank(b: Business): void {
  const firstDay = Math.floor(b.start / DAY_MS) * DAY_MS;
  let payoutAt = firstDay + b.options.payoutHourUtc * HOUR_MS;
  if (payoutAt <= b.start) payoutAt += DAY_MS;
  schedulePayoutRun(b, payoutAt);
  scheduleBankDay(b, firstDay);
}

function schedulePayoutRun(b: Business, at: number): void {
  b.schedule(at, () => {
    payoutRun(b, at);
    schedulePayoutRun(b, at + DAY_MS);
  });
}

function payoutRun(b: Business, at: number): void {
  const eligible = b.invoices.filter((i) => i.factoringState === 'approved' && i.paidOutBy === null && !i.canceled);
  if (eligible.length === 0) return;
  let amount = 0n;
  for (const invoice of eligible) {
    const { fee, vat } = feeWithVat(invoice.grossCents, b.options.feeBasisPoints, b.options.vatPercent);
    amount += invoice.grossCents - fee - vat;
  }
  const creditNotes = b.pendingCreditNotes.splice(0);
  for (const note of creditNotes) amount -= note.amountCents;
  if (amount <= 0n) {
    b.pendingCreditNotes.push(...creditNotes);
    return;
  }
  const payout: PayoutRecord = {
    uuid: b.rng.uuid(),
    sepaInstructionId: sepaReference(b, at),
    amountCents: amount,
    externalReferenceIds: eligible.map((i) => i.externalReferenceId),
    at,
    status: 'complete',
  };
  for (const invoice of eligible) invoice.paidOutBy = payout.uuid;
  b.payouts.push(payout);
  const creditAt = at + b.rng.int(2 * HOUR_MS, 20 * HOUR_MS);

  // A payout the provider itself cancels (bank details rejected): no credit, invoices wait for the next run.
  if (b.rng.chance(0.02)) {
    payout.status = 'cancelled';
    for (const invoice of eligible) invoice.paidOutBy = null;
    b.pendingCreditNotes.push(...creditNotes);
    emitPayout(b, payout, at);
    return;
  }
  const fault = b.hooks.payoutFault();
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
      creditLine(b, payout, creditAt, amount);
      b.hooks.record({ fault, env: b.env, payout, unknownReference });
      break;
    }
    case 'payout_duplicate_sepa': {
      creditLine(b, payout, creditAt, amount);
      const second: PayoutRecord = { ...payout, uuid: b.rng.uuid(), externalReferenceIds: [...payout.externalReferenceIds] };
      second.at = at + b.rng.int(MINUTE_MS, 2 * HOUR_MS);
      b.payouts.push(second);
      b.schedule(second.at, () => emitPayout(b, second, second.at));
      b.hooks.record({ fault, env: b.env, payout: second, original: payout });
      break;
    }
    case 'payout_cancelled_credited': {
      payout.status = 'cancelled';
      const line = creditLine(b, payout, creditAt, amount);
      b.hooks.record({ fault, env: b.env, payout, line });
      break;
    }
    case 'none':
      creditLine(b, payout, creditAt, amount);
      break;
  }
  emitPayout(b, payout, at);
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

function addLine(b: Business, line: Omit<BankLine, 'id'>): BankLine {
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

