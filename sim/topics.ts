import { ALL_TOPICS, ORDER_STATES_WITH_TOPIC as SPEC_ORDER_STATES, subscriptionMatches } from '../src/provider/vocabulary.js';

/** Every topic the spec lists, plus the ones it shows payloads for (applicant, billing_configuration, kyc/accepted). */
export const TOPICS = ALL_TOPICS;
export type Topic = (typeof TOPICS)[number];

/**
 * Bare topics accepted for registration. The spec names six; applicant and billing_configuration
 * are accepted too because their events exist and otherwise could only be had one subtopic at a time.
 */
export const BARE_TOPICS = ['order', 'invoice', 'payout', 'buyer', 'factoring', 'kyc', 'applicant', 'billing_configuration'] as const;

/** Order states with a webhook topic; shipped and complete have none. */
export const ORDER_STATES_WITH_TOPIC: ReadonlySet<string> = new Set(SPEC_ORDER_STATES);

export function isKnownTopic(topic: string): boolean {
  return (TOPICS as readonly string[]).includes(topic) || (BARE_TOPICS as readonly string[]).includes(topic);
}

export { subscriptionMatches };
