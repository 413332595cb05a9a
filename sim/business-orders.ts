import type { Business } from './business.js';
import { emitLimit } from './business-buyers.js';
import { startShipment } from './business-invoices.js';
import type { OrderRecord } from './model.js';
import { bankAccountFor, newBuyer } from './parties.js';
import { orderPayload } from './payloads.js';
import { ORDER_STATES_WITH_TOPIC } from './topics.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from './time.js';

const PENDING_REASONS = ['order amount above the automatic limit', 'buyer identity needs manual check', 'unusual order pattern'];

/** Orders arrive at `ordersPerDay` on average, evenly spread (uniform inter-arrival in 0.2..1.8 of the mean). */
export function startOrders(b: Business): void {
  scheduleNextOrder(b, b.start + 5 * MINUTE_MS);
}

function scheduleNextOrder(b: Business, from: number): void {
  const mean = DAY_MS / b.options.ordersPerDay;
  const at = from + Math.max(1, Math.floor(mean * (0.2 + 1.6 * b.rng.next())));
  b.schedule(at, () => {
    createOrder(b, at);
    scheduleNextOrder(b, at);
  });
}

export function createOrder(b: Business, at: number): OrderRecord {
  const fault = b.hooks.orderFault();
  const buyer = b.acceptedBuyers.length > 0 ? b.rng.pick(b.acceptedBuyers) : newBuyer(b.rng, b.reference('BUY', 'buyer'));
  const order: OrderRecord = {
    uuid: b.rng.uuid(),
    externalReferenceId: b.reference(fault === 'ghost' ? 'ORD-X' : 'ORD', fault === 'ghost' ? 'ghost-order' : 'order'),
    state: '',
    listIndex: -1,
    createdAt: at,
    buyer,
    amountCents: BigInt(b.rng.int(50_00, 5_000_00)),
    netTermDays: b.rng.pick([7, 14, 30]),
    asynchronous: b.rng.chance(0.2),
    bankAccount: bankAccountFor(b.rng, b.providerName),
    silent: fault === 'silent',
    ghost: fault === 'ghost',
    history: [],
    invoiceCount: 0,
    completedInvoices: 0,
    fixedFeeCharged: false,
  };
  if (order.ghost) {
    b.ghostOrders.push(order);
    b.hooks.record({ fault: 'ghost_order', env: b.env, order });
  } else {
    order.listIndex = b.orders.length;
    b.orders.push(order);
    b.ordersByUuid.set(order.uuid, order);
    if (order.silent) b.hooks.record({ fault: 'silent_order', env: b.env, order });
  }
  enterState(b, order, 'authorized', at);
  return order;
}

/**
 * Moves the order and plans its next change at once, so each order event knows whether a later
 * transition follows (the fault layer only drops or delays events of an order's final state, which
 * keeps the expected discrepancy unambiguous).
 */
function enterState(b: Business, order: OrderRecord, state: string, at: number): void {
  b.setOrderState(order, state, at);
  const next = planNext(b, order, state, at);
  if (ORDER_STATES_WITH_TOPIC.has(state)) emitOrderEvent(b, order, state, at, next?.at);
  if (state === 'shipped') startShipment(b, order, at);
  if (state === 'confirmed' && !order.ghost && b.rng.chance(0.3)) {
    const limitAt = at + b.rng.int(1000, 10 * MINUTE_MS);
    b.schedule(limitAt, () => emitLimit(b, order.buyer, limitAt));
  }
  if (next) b.schedule(next.at, () => enterState(b, order, next.state, next.at));
}

function planNext(b: Business, order: OrderRecord, state: string, at: number): { state: string; at: number } | undefined {
  switch (state) {
    case 'authorized': {
      const nextState = b.rng.weighted([['confirmed', 70], ['pending', 12], ['declined', 10], ['canceled', 8]] as const);
      return { state: nextState, at: at + b.rng.int(5 * MINUTE_MS, 3 * HOUR_MS) };
    }
    case 'pending': {
      const nextState = b.rng.weighted([['confirmed', 75], ['declined', 25]] as const);
      return { state: nextState, at: at + b.rng.int(HOUR_MS, DAY_MS) };
    }
    case 'confirmed': {
      const nextState = b.rng.weighted([['shipped', 80], ['canceled', 8], ['stay', 12]] as const);
      const when = at + b.rng.int(2 * HOUR_MS, 2 * DAY_MS);
      // Silent and ghost orders end at a state with a topic, so their expected finding is exact.
      if (nextState === 'stay' || (nextState === 'shipped' && (order.silent || order.ghost))) return undefined;
      return { state: nextState, at: when };
    }
    default:
      return undefined;
  }
}

function emitOrderEvent(b: Business, order: OrderRecord, state: string, at: number, nextAt: number | undefined): void {
  const topic = `order/${state}`;
  const eventTime = b.eventTime(at);
  const payload = orderPayload({
    topic,
    orderUuid: order.uuid,
    state,
    externalReferenceId: order.externalReferenceId,
    eventTime,
    buyer: { uuid: order.buyer.uuid, name: order.buyer.companyName, legal_form: order.buyer.legalForm },
    ...(state === 'pending' ? { pendingReason: b.rng.pick(PENDING_REASONS) } : {}),
    ...(state === 'confirmed' ? { netTermDays: order.netTermDays, bankAccount: order.bankAccount } : {}),
    ...(state === 'authorized' && order.asynchronous
      ? {
          bankAccount: order.bankAccount,
          confirmationLink: `https://checkout.provider.example/confirm?token=${b.rng.hex(16)}`,
        }
      : {}),
  });
  b.emit({
    at,
    topic,
    entityType: 'order',
    entityId: order.uuid,
    externalReferenceId: order.externalReferenceId,
    eventTime,
    payload,
    orderState: state,
    nextTransitionAt: nextAt,
    order,
  });
}
