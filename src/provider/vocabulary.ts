import type { ProviderEnvironment } from '../config/schema.js';

/**
 * The provider's vocabulary as the spec (shared/provider-api.md) states it, in one place: the
 * topics by family, which are bare and which must be subscribed one by one, the order states that
 * have a topic, and the addresses deliveries come from. The receiver, the reconciler, the commands
 * and the simulator all read it from here.
 */
/**
 * Every topic the spec lists (the "Topics" table plus the payloads shown for applicant/*,
 * billing_configuration/created and kyc/accepted), by family. A family shares one payload shape.
 */
export const TOPICS_BY_FAMILY = {
  order: ['order/authorized', 'order/confirmed', 'order/pending', 'order/declined', 'order/canceled'],
  invoice: ['invoice/created', 'invoice/payment', 'invoice/late', 'invoice/canceled', 'invoice/complete', 'invoice/reopened'],
  payout: ['payout/complete', 'payout/cancelled'],
  buyer: ['buyer/accepted', 'buyer/pending', 'buyer/declined', 'buyer/limit_updated'],
  factoring: ['factoring/approved', 'factoring/pending', 'factoring/declined'],
  kyc: ['kyc/approved', 'kyc/pending', 'kyc/declined', 'kyc/accepted'],
  applicant: ['applicant/pending', 'applicant/accepted'],
  billing_configuration: ['billing_configuration/created'],
} as const;

export type TopicFamily = keyof typeof TOPICS_BY_FAMILY;
export type Topic = (typeof TOPICS_BY_FAMILY)[TopicFamily][number];

const FAMILY_OF = new Map<string, TopicFamily>(
  Object.entries(TOPICS_BY_FAMILY).flatMap(([family, topics]) => topics.map((topic) => [topic, family as TopicFamily])),
);

export const ALL_TOPICS: readonly Topic[] = [...FAMILY_OF.keys()] as Topic[];

/** The bare topics one can subscribe to (the spec: order, invoice, payout, buyer, factoring, kyc). */
export const BARE_TOPICS = ['order', 'invoice', 'payout', 'buyer', 'factoring', 'kyc'] as const;

/**
 * Topics whose payloads the spec shows but that its Topics table does not list, so a bare
 * subscription may not send them ("subscribing with a bare topic sends every event listed under
 * that topic"); applicant and billing_configuration are not bare topics at all.
 */
export const UNLISTED_TOPICS = ['kyc/accepted', 'applicant/pending', 'applicant/accepted', 'billing_configuration/created'] as const;

/** What `webhooks register` and the demo subscribe to: every topic family the daemon reads. */
export const SUBSCRIPTION_TOPICS: readonly string[] = [...BARE_TOPICS, ...UNLISTED_TOPICS];

/**
 * A topic named in code (an SQL comparison, say) checked against the spec's list at compile time:
 * `topic('factoring/approved')`. Every topic literal in src/ goes through here (the architecture
 * test refuses one elsewhere), so a topic the spec does not have cannot be compared with.
 */
export function topic<T extends Topic>(name: T): T {
  return name;
}

export function familyOf(topic: string): TopicFamily | undefined {
  return FAMILY_OF.get(topic);
}

/** Order states that some webhook topic announces; any other state (shipped, complete, ...) has none. */
export const ORDER_STATES_WITH_TOPIC = ['authorized', 'pending', 'confirmed', 'declined', 'canceled'] as const;

/** The spec's rule: a bare topic receives every event under it, topic/subtopic only that event. */
export function subscriptionMatches(registered: string, topic: string): boolean {
  if (registered === topic) return true;
  return !registered.includes('/') && topic.startsWith(`${registered}/`);
}

/** The spec's "Webhook authenticity" table: the fixed addresses deliveries come from. */
export const SPEC_SOURCE_ADDRESSES: Record<ProviderEnvironment, readonly string[]> = {
  sandbox: ['3.67.101.172', '3.69.55.142', '3.72.30.70', '34.159.77.21'],
  production: ['3.68.36.187', '3.127.195.5', '18.194.230.169', '34.185.141.246'],
};
