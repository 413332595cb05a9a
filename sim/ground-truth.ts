import type { FaultRecord, InvoiceRecord, OrderRecord, PayoutRecord } from './model.js';
import type { Env } from './options.js';
import type { BenignFault, ExpectedDiscrepancy, RejectedDelivery } from './ground-truth-types.js';
import { ORDER_STATES_WITH_TOPIC } from './topics.js';
import { isoSeconds } from './time.js';

export type * from './ground-truth-types.js';

/** The state before the order's final one that a webhook announced, or null. */
function previousWebhookState(order: OrderRecord): string | null {
  const states = order.history.map((h) => h.state).filter((s) => ORDER_STATES_WITH_TOPIC.has(s));
  return states.length >= 2 ? (states[states.length - 2] ?? null) : null;
}

/**
 * Turns fault records into expected findings, judged against the business as it is now (the rules
 * are spelled out in README.md). Records whose expected finding no longer holds become benign.
 */
export function expectedFindings(records: readonly FaultRecord[]): {
  discrepancies: ExpectedDiscrepancy[];
  rejected: RejectedDelivery[];
  benign: BenignFault[];
} {
  const discrepancies: ExpectedDiscrepancy[] = [];
  const rejected: RejectedDelivery[] = [];
  const benign: BenignFault[] = [];
  const none = { external_reference_id: null, sepa_reference: null, expected: null, observed: null };
  const paidTwiceSeen = new Set<string>();
  const notPaidOut = (env: Env, invoice: InvoiceRecord, fault: string, why: string) => {
    if (invoice.completedPayouts.length > 0) {
      benign.push({ fault, environment: env, entity_type: 'invoice', entity_id: invoice.uuid, topic: '', details: 'a completed payout lists it after all' });
      return;
    }
    discrepancies.push({
      ...none,
      kind: 'invoice_not_paid_out',
      status: 'open',
      environment: env,
      entity_type: 'invoice',
      entity_id: invoice.uuid,
      subject: '',
      external_reference_id: invoice.externalReferenceId,
      expected: invoice.grossCents.toString(),
      details: `invoice ${invoice.externalReferenceId}, factored at ${isoSeconds(invoice.approvedAt ?? invoice.createdAt)}: ${why}`,
      fault,
      payable_since: isoSeconds(invoice.approvedAt ?? invoice.createdAt),
    });
  };
  const paidTwice = (env: Env, invoice: InvoiceRecord, first: PayoutRecord, second: PayoutRecord, fault: string) => {
    // One finding per invoice, however many payouts list it.
    if (paidTwiceSeen.has(`${env}|${invoice.uuid}`)) return;
    paidTwiceSeen.add(`${env}|${invoice.uuid}`);
    discrepancies.push({
      ...none,
      kind: 'invoice_paid_out_twice',
      status: 'open',
      environment: env,
      entity_type: 'invoice',
      entity_id: invoice.uuid,
      subject: '',
      external_reference_id: invoice.externalReferenceId,
      expected: first.uuid,
      observed: `${first.uuid},${second.uuid}`,
      details: `completed payouts ${first.uuid} and ${second.uuid} both list invoice ${invoice.externalReferenceId}`,
      fault,
      related_entity_id: first.uuid,
    });
  };
  for (const r of records) {
    switch (r.fault) {
      case 'never_delivered':
      case 'delayed_past_grace': {
        const { event } = r;
        const order = event.order;
        if (!order || order.state !== event.orderState) {
          benign.push({ fault: r.fault, environment: event.env, entity_type: 'order', entity_id: event.entityId, topic: event.topic, details: 'the API no longer shows this state' });
          break;
        }
        const late = r.fault === 'delayed_past_grace';
        discrepancies.push({
          ...none,
          kind: 'missed_webhook',
          status: late ? 'resolved' : 'open',
          environment: event.env,
          entity_type: 'order',
          entity_id: order.uuid,
          subject: '',
          external_reference_id: order.externalReferenceId,
          expected: order.state,
          observed: previousWebhookState(order),
          details: late
            ? `${event.topic} delivered only after the grace period (at ${isoSeconds(r.deliveredAt ?? event.at)}); flagged until it arrives`
            : `${event.topic} was never delivered; the API shows ${order.state}`,
          fault: r.fault,
          event_key: undefined,
          ...(late ? { timing_dependent: true } : {}),
        });
        break;
      }
      case 'silent_order':
        if (!ORDER_STATES_WITH_TOPIC.has(r.order.state)) {
          benign.push({ fault: r.fault, environment: r.env, entity_type: 'order', entity_id: r.order.uuid, topic: '', details: `current state ${r.order.state || '(none)'} has no topic` });
          break;
        }
        discrepancies.push({
          ...none,
          kind: 'missed_webhook',
          status: 'open',
          environment: r.env,
          entity_type: 'order',
          entity_id: r.order.uuid,
          subject: '',
          external_reference_id: r.order.externalReferenceId,
          expected: r.order.state,
          details: `no webhook ever mentioned this order; the API shows ${r.order.state}`,
          fault: r.fault,
        });
        break;
      case 'ghost_order':
        discrepancies.push({
          ...none,
          kind: 'orphan_webhook',
          status: 'open',
          environment: r.env,
          entity_type: 'order',
          entity_id: r.order.uuid,
          subject: '',
          external_reference_id: r.order.externalReferenceId,
          observed: r.order.state,
          details: 'webhooks name an order the API never lists',
          fault: r.fault,
        });
        break;
      case 'second_event':
        discrepancies.push({
          ...none,
          kind: 'duplicate_event',
          status: 'open',
          environment: r.event.env,
          entity_type: 'order',
          entity_id: r.event.entityId,
          subject: r.event.orderState ?? '',
          external_reference_id: r.event.externalReferenceId,
          expected: r.event.eventTime,
          observed: r.secondEventTime,
          details: `two distinct ${r.event.topic} events for one order (event times ${r.event.eventTime} and ${r.secondEventTime})`,
          fault: r.fault,
          event_key: r.secondEventKey,
        });
        break;
      case 'repeated':
        for (let copy = 1; copy <= r.copies; copy++) {
          discrepancies.push({
            ...none,
            kind: 'duplicate_delivery',
            status: 'resolved',
            environment: r.event.env,
            entity_type: r.event.entityType as 'order' | 'invoice' | 'payout',
            entity_id: r.event.entityId,
            subject: r.eventKey,
            external_reference_id: r.event.externalReferenceId,
            details: `${r.event.topic} delivered again with identical bytes (copy ${copy} of ${r.copies})`,
            fault: r.fault,
            event_key: r.eventKey,
            delivery_number: copy + 1,
          });
        }
        break;
      case 'wrong_secret':
        rejected.push({
          environment: r.event.env,
          signed_with: r.signedWith,
          topic: r.event.topic,
          entity_type: r.event.entityType,
          entity_id: r.event.entityId,
          event_key: r.eventKey,
          details: `an extra copy signed with the ${r.signedWith} secret: the receiver must answer 401 and store nothing`,
        });
        break;
      case 'reordered':
        benign.push({ fault: r.fault, environment: r.event.env, entity_type: 'order', entity_id: r.event.entityId, topic: r.event.topic, details: 'delivered after the order\'s next event; ordering by event_time must absorb it' });
        break;
      case 'payout_amount_mismatch':
        discrepancies.push({
          ...none,
          kind: 'payout_amount_mismatch',
          status: 'open',
          environment: r.env,
          entity_type: 'payout',
          entity_id: r.payout.uuid,
          subject: '',
          sepa_reference: r.payout.sepaInstructionId,
          expected: r.payout.amountCents.toString(),
          observed: r.line.amountCents.toString(),
          details: `bank credit ${r.line.id} carries ${r.line.amountCents} cents, the payout ${r.payout.amountCents}`,
          fault: r.fault,
          ...(r.line.amountCents < r.payout.amountCents ? { payout_time: new Date(r.payout.at).toISOString() } : {}),
        });
        break;
      case 'payout_no_credit':
        discrepancies.push({
          ...none,
          kind: 'payout_not_on_statement',
          status: 'open',
          environment: r.env,
          entity_type: 'payout',
          entity_id: r.payout.uuid,
          subject: '',
          sepa_reference: r.payout.sepaInstructionId,
          expected: r.payout.amountCents.toString(),
          details: 'the payout completed but no bank credit carries its SEPA reference',
          fault: r.fault,
        });
        break;
      case 'payout_unknown_invoice':
        discrepancies.push({
          ...none,
          kind: 'payout_unknown_invoice',
          status: 'open',
          environment: r.env,
          entity_type: 'payout',
          entity_id: r.payout.uuid,
          subject: r.unknownReference,
          sepa_reference: r.payout.sepaInstructionId,
          observed: r.unknownReference,
          details: `the payout lists invoice ${r.unknownReference}, which was never created`,
          fault: r.fault,
        });
        break;
      case 'payout_duplicate_sepa':
        discrepancies.push({
          ...none,
          kind: 'duplicate_event',
          status: 'open',
          environment: r.env,
          entity_type: 'payout',
          entity_id: r.payout.uuid,
          subject: r.payout.sepaInstructionId,
          sepa_reference: r.payout.sepaInstructionId,
          details: `payouts ${r.original.uuid} and ${r.payout.uuid} carry one SEPA reference`,
          fault: r.fault,
          related_entity_id: r.original.uuid,
        });
        // One transfer announced twice (one SEPA reference, one credit): its invoices are paid once,
        // so no invoice_paid_out_twice (the rule's near miss, as the merchant docs' SEPA id says).
        break;
      case 'payout_cancelled_credited':
        discrepancies.push({
          ...none,
          kind: 'payout_cancelled_but_credited',
          status: 'open',
          environment: r.env,
          entity_type: 'payout',
          entity_id: r.payout.uuid,
          subject: '',
          sepa_reference: r.payout.sepaInstructionId,
          expected: 'cancelled',
          observed: r.line.amountCents.toString(),
          details: `the payout was cancelled but bank credit ${r.line.id} carries its SEPA reference`,
          fault: r.fault,
        });
        // No completed payout lists its invoices; the provider does not list them again.
        for (const invoice of r.invoices) if (!invoice.canceled) notPaidOut(r.env, invoice, r.fault, `only the cancelled payout ${r.payout.uuid} lists it`);
        break;
      case 'payout_report_mismatch':
        discrepancies.push({
          ...none,
          kind: 'payout_report_mismatch',
          status: 'open',
          environment: r.env,
          entity_type: 'payout',
          entity_id: r.payout.uuid,
          subject: '',
          sepa_reference: r.payout.sepaInstructionId,
          expected: r.payout.amountCents.toString(),
          observed: r.reportedCents.toString(),
          details: `the payout's report leaves out invoice ${r.droppedRow.docNo}: its rows add up to ${r.reportedCents} cents, the payout ${r.payout.amountCents}`,
          fault: r.fault,
        });
        break;
      case 'invoice_not_paid_out':
        notPaidOut(r.env, r.invoice, r.fault, 'no payout ever lists it');
        break;
      case 'invoice_paid_out_twice': {
        const [first, second] = r.payouts;
        paidTwice(r.env, r.invoice, first, second, r.fault);
        break;
      }
      case 'canceled_invoice_paid':
        discrepancies.push({
          ...none,
          kind: 'payout_pays_canceled_invoice',
          status: 'open',
          environment: r.env,
          entity_type: 'invoice',
          entity_id: r.invoice.uuid,
          subject: '',
          external_reference_id: r.invoice.externalReferenceId,
          sepa_reference: r.payout.sepaInstructionId,
          expected: 'canceled',
          observed: r.payout.uuid,
          details: `payout ${r.payout.uuid} lists invoice ${r.invoice.externalReferenceId}, canceled at ${isoSeconds(r.invoice.canceledAt ?? 0)}`,
          fault: r.fault,
          related_entity_id: r.payout.uuid,
        });
        break;
      case 'fee_overcharged':
      case 'fixed_fee_twice':
        discrepancies.push({
          ...none,
          kind: 'payout_deduction_mismatch',
          status: 'open',
          environment: r.env,
          entity_type: 'invoice',
          entity_id: r.invoice.uuid,
          subject: r.payout.uuid,
          external_reference_id: r.invoice.externalReferenceId,
          sepa_reference: r.payout.sepaInstructionId,
          expected: r.expectedCents.toString(),
          observed: r.observedCents.toString(),
          details: r.fault === 'fee_overcharged'
            ? `the report row's discount is ${r.observedCents} cents, the contract's ${r.expectedCents} (MDR 0.5 points over)`
            : `the report row charges the fixed fee (${r.observedCents} cents) again on the order's second invoice`,
          fault: r.fault,
          related_entity_id: r.payout.uuid,
        });
        break;
      case 'buyer_paid_directly': {
        const line = r.deduction.line;
        if (!line) break;
        const deducted = r.deduction.deductedBy;
        discrepancies.push({
          ...none,
          kind: 'buyer_paid_merchant_directly',
          status: deducted ? 'resolved' : 'open',
          environment: r.env,
          entity_type: 'statement_line',
          entity_id: line.id,
          subject: '',
          external_reference_id: r.invoice.externalReferenceId,
          observed: line.amountCents.toString(),
          details: deducted
            ? `the buyer paid invoice ${r.invoice.externalReferenceId} to the merchant; payout ${deducted}'s report deducts it as a buyer payment`
            : `the buyer paid invoice ${r.invoice.externalReferenceId} to the merchant; no payout report deducts it yet`,
          fault: r.fault,
          ...(deducted ? { related_entity_id: deducted } : {}),
        });
        break;
      }
      case 'invoice_fault_not_applicable':
        benign.push({ fault: r.intended, environment: r.env, entity_type: 'invoice', entity_id: r.invoice.uuid, topic: '', details: r.details });
        break;
      case 'credit_without_payout':
        discrepancies.push({
          ...none,
          kind: 'statement_credit_without_payout',
          status: 'open',
          environment: r.env,
          entity_type: 'statement_line',
          entity_id: r.line.id,
          subject: '',
          sepa_reference: r.line.reference,
          observed: r.line.amountCents.toString(),
          details: 'a credit from the provider\'s account carries a SEPA reference no payout has',
          fault: r.fault,
        });
        break;
    }
  }
  return { discrepancies: discrepancies.map(canonical), rejected, benign };
}

const FIELD_ORDER = [
  'kind',
  'status',
  'environment',
  'entity_type',
  'entity_id',
  'subject',
  'external_reference_id',
  'sepa_reference',
  'expected',
  'observed',
  'details',
  'fault',
] as const;


/** The report's field order first, then the simulator's extras; undefined extras dropped. */
function canonical(d: ExpectedDiscrepancy): ExpectedDiscrepancy {
  const out: Record<string, unknown> = {};
  for (const key of FIELD_ORDER) out[key] = d[key];
  for (const [key, value] of Object.entries(d)) if (!(key in out) && value !== undefined) out[key] = value;
  return out as unknown as ExpectedDiscrepancy;
}
