/** Every topic the spec lists, plus the ones it shows payloads for (applicant, billing_configuration, kyc/accepted). */
export const TOPICS = [
  'order/authorized',
  'order/confirmed',
  'order/pending',
  'order/declined',
  'order/canceled',
  'invoice/created',
  'invoice/payment',
  'invoice/late',
  'invoice/canceled',
  'invoice/complete',
  'invoice/reopened',
  'payout/complete',
  'payout/cancelled',
  'buyer/accepted',
  'buyer/pending',
  'buyer/declined',
  'buyer/limit_updated',
  'factoring/approved',
  'factoring/pending',
  'factoring/declined',
  'kyc/approved',
  'kyc/pending',
  'kyc/declined',
  'kyc/accepted',
  'applicant/pending',
  'applicant/accepted',
  'billing_configuration/created',
] as const;
export type Topic = (typeof TOPICS)[number];

/**
 * Bare topics accepted for registration. The spec names six; applicant and billing_configuration
 * are accepted too because their events exist and otherwise could only be had one subtopic at a time.
 */
export const BARE_TOPICS = ['order', 'invoice', 'payout', 'buyer', 'factoring', 'kyc', 'applicant', 'billing_configuration'] as const;

/** Order states with a webhook topic; shipped and complete have none. */
export const ORDER_STATES_WITH_TOPIC = new Set(['authorized', 'pending', 'confirmed', 'declined', 'canceled']);

export function isKnownTopic(topic: string): boolean {
  return (TOPICS as readonly string[]).includes(topic) || (BARE_TOPICS as readonly string[]).includes(topic);
}

/** The spec's rule: a bare topic receives every event under it, topic/subtopic only that event. */
export function subscriptionMatches(registered: string, topic: string): boolean {
  if (registered === topic) return true;
  return !registered.includes('/') && topic.startsWith(`${registered}/`);
}
