import type { Business } from './business.js';
import {
  applicantPayload,
  billingConfigurationPayload,
  buyerLimitPayload,
  buyerStatePayload,
  kycPayload,
  type BuyerRecord,
} from './payloads.js';
import { newBuyer, personName } from './parties.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from './time.js';

/**
 * Buyer onboarding: some through an applicant, then accepted (some after manual review, some
 * declined), KYC, a billing configuration and limit updates. Initial buyers are onboarded in the
 * first minutes so orders have someone to buy from the start.
 */
export function startBuyers(b: Business): void {
  for (let i = 0; i < b.options.initialBuyers; i++) {
    const at = b.start + i * MINUTE_MS + b.rng.int(0, 30_000);
    b.schedule(at, () => onboard(b, at, true));
  }
  if (b.options.newBuyersPerDay > 0) scheduleNextBuyer(b, b.start);
}

function scheduleNextBuyer(b: Business, from: number): void {
  const mean = DAY_MS / b.options.newBuyersPerDay;
  const at = from + Math.max(1000, Math.floor(mean * (0.2 + 1.6 * b.rng.next())));
  b.schedule(at, () => {
    onboard(b, at, false);
    scheduleNextBuyer(b, at);
  });
}

function onboard(b: Business, at: number, initial: boolean): void {
  const buyer = newBuyer(b.rng, b.reference('BUY', 'buyer'));
  let t = at;
  if (!initial && b.rng.chance(0.4)) {
    const applicant = {
      uuid: b.rng.uuid(),
      externalReferenceId: b.reference('APP', 'applicant'),
      ...personName(b.rng),
      email: buyer.email,
      phone: buyer.phone,
    };
    b.emit({
      at: t,
      topic: 'applicant/pending',
      entityType: 'applicant',
      entityId: applicant.uuid,
      externalReferenceId: applicant.externalReferenceId,
      eventTime: null,
      payload: applicantPayload('applicant/pending', applicant, 'pending', buyer, 'pending', 'identity documents under review'),
    });
    t += b.rng.int(10 * MINUTE_MS, 6 * HOUR_MS);
    const acceptedAt = t;
    b.schedule(acceptedAt, () =>
      b.emit({
        at: acceptedAt,
        topic: 'applicant/accepted',
        entityType: 'applicant',
        entityId: applicant.uuid,
        externalReferenceId: applicant.externalReferenceId,
        eventTime: null,
        payload: applicantPayload('applicant/accepted', applicant, 'accepted', buyer, 'accepted'),
      }),
    );
    t += b.rng.int(1000, 10 * MINUTE_MS);
  }
  const path = initial ? 'accepted' : b.rng.weighted([['accepted', 75], ['review', 20], ['declined', 5]] as const);
  if (path === 'declined') {
    const when = t;
    b.schedule(when, () => emitBuyerState(b, buyer, 'buyer/declined', 'declined', when));
    return;
  }
  if (path === 'review') {
    const when = t;
    b.schedule(when, () => emitBuyerState(b, buyer, 'buyer/pending', 'pending', when));
    t += b.rng.int(HOUR_MS, DAY_MS);
    if (b.rng.chance(0.2)) {
      const declinedAt = t;
      b.schedule(declinedAt, () => emitBuyerState(b, buyer, 'buyer/declined', 'declined', declinedAt));
      return;
    }
  }
  const acceptedAt = t;
  b.schedule(acceptedAt, () => {
    emitBuyerState(b, buyer, 'buyer/accepted', 'accepted', acceptedAt);
    b.acceptedBuyers.push(buyer);
  });
  t += b.rng.int(1000, 30 * MINUTE_MS);
  if (b.rng.chance(0.3)) {
    const pendingAt = t;
    b.schedule(pendingAt, () => emitKyc(b, buyer, 'kyc/pending', 'pending', pendingAt));
    t += b.rng.int(HOUR_MS, 12 * HOUR_MS);
  }
  const kycAt = t;
  const kycDeclined = b.rng.chance(0.03);
  b.schedule(kycAt, () =>
    kycDeclined ? emitKyc(b, buyer, 'kyc/declined', 'declined', kycAt) : emitKyc(b, buyer, 'kyc/accepted', 'accepted', kycAt),
  );
  const billingAt = t + b.rng.int(1000, HOUR_MS);
  b.schedule(billingAt, () => {
    const direct = b.rng.chance(0.3);
    b.emit({
      at: billingAt,
      topic: 'billing_configuration/created',
      entityType: 'billing_configuration',
      externalReferenceId: null,
      ...billingEvent(b, buyer, billingAt, direct),
    });
  });
  const limitAt = billingAt + b.rng.int(1000, HOUR_MS);
  b.schedule(limitAt, () => emitLimit(b, buyer, limitAt));
}

function billingEvent(b: Business, buyer: BuyerRecord, at: number, direct: boolean) {
  const uuid = b.rng.uuid();
  const eventTime = b.eventTime(at);
  return {
    entityId: uuid,
    eventTime,
    payload: billingConfigurationPayload({
      schedule: b.rng.pick(['weekly', 'biweekly', 'monthly']),
      buyerUuid: buyer.uuid,
      eventTime,
      dueInDays: b.rng.pick([14, 30, 45]),
      generationDelayDays: b.rng.int(0, 3),
      paymentMethodStatement: direct ? 'direct_debit' : 'bank_transfer',
      uuid,
    }),
  };
}

function emitBuyerState(b: Business, buyer: BuyerRecord, topic: string, state: string, at: number): void {
  b.emit({
    at,
    topic,
    entityType: 'buyer',
    entityId: buyer.uuid,
    externalReferenceId: buyer.externalReferenceId,
    eventTime: null,
    payload: buyerStatePayload(topic, buyer, state),
  });
}

function emitKyc(b: Business, buyer: BuyerRecord, topic: string, state: string, at: number): void {
  b.emit({
    at,
    topic,
    entityType: 'kyc',
    entityId: buyer.uuid,
    externalReferenceId: buyer.externalReferenceId,
    eventTime: null,
    payload: kycPayload(topic, buyer, state),
  });
}

/** Limit updates carry no event_time, so the balance differs per update to keep bodies distinct. */
export function emitLimit(b: Business, buyer: BuyerRecord, at: number): void {
  const limit = BigInt(b.rng.int(20, 200)) * 1_000_00n;
  b.emit({
    at,
    topic: 'buyer/limit_updated',
    entityType: 'buyer',
    entityId: buyer.uuid,
    externalReferenceId: buyer.externalReferenceId,
    eventTime: null,
    payload: buyerLimitPayload(buyer, {
      purchasingLimitCents: limit,
      balanceCents: BigInt(b.rng.int(0, Number(limit / 100n))) * 100n + BigInt(b.nextNumber('limit-update') % 100),
      maxCollectionsState: b.rng.pick(['none', 'reminder', 'collection']),
      maxPurchaseValueCents: limit / 4n,
    }),
  });
}
