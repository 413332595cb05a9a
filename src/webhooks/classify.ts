import { hash } from 'node:crypto';
import type { ZodType } from 'zod';
import { parseEventTime, type EventTime } from './event-time.js';
import * as payloads from './payloads.js';
import * as rows from './typed-rows.js';
import { familyOf, type TopicFamily } from './topics.js';
import type { TypedRow } from './typed-rows.js';

export type ParseStatus = 'parsed' | 'unknown_topic' | 'invalid_shape';

export interface ClassifiedEvent {
  /** Identity shared by every retry of this event (see eventKey). */
  key: string;
  entityType: TopicFamily;
  entityId: string;
  eventTime: EventTime | undefined;
  typed: TypedRow;
}

export type Classification =
  | { ok: false; reason: 'invalid_json'; error: string }
  | { ok: true; status: ParseStatus; topic: string | null; error?: string; event?: ClassifiedEvent };

/**
 * An event's identity. Where the payload has an event_time, the event is (topic, entity,
 * event_time to the nanosecond): a retry repeats all three, while a second event for the same
 * change carries a new event_time. Payloads without event_time (buyer, kyc, applicant, factoring)
 * are identified by their exact bytes, which a retry repeats.
 */
export function eventKey(topic: string, entityId: string, eventTime: EventTime | undefined, rawBody: Buffer): string {
  // One-shot hash: no Hash object per delivery (Node >= 20.12).
  return hash('sha256', eventTime ? `${topic}\n${entityId}\n${eventTime.sortable}` : rawBody, 'hex');
}

interface FamilyRule<T> {
  schema: ZodType<T>;
  entityId(payload: T): string;
  eventTime(payload: T): string | undefined;
  row(payload: T, time: EventTime | undefined): TypedRow;
}

const rule = <T>(r: FamilyRule<T>): FamilyRule<unknown> => r as FamilyRule<unknown>;
const required = (t: EventTime | undefined): EventTime => {
  if (!t) throw new Error('event_time required'); // the schema has already refused a missing one
  return t;
};

const RULES: Record<TopicFamily, FamilyRule<unknown>> = {
  order: rule({ schema: payloads.orderPayload, entityId: (p) => p.order_uuid, eventTime: (p) => p.event_time, row: (p, t) => rows.orderRow(p, required(t)) }),
  invoice: rule({ schema: payloads.invoicePayload, entityId: (p) => p.invoice_uuid, eventTime: (p) => p.event_time, row: (p, t) => rows.invoiceRow(p, required(t)) }),
  payout: rule({ schema: payloads.payoutPayload, entityId: (p) => p.payout_uuid, eventTime: (p) => p.event_time, row: (p, t) => rows.payoutRow(p, required(t)) }),
  buyer: rule({ schema: payloads.buyerPayload, entityId: (p) => p.buyer.uuid, eventTime: () => undefined, row: (p) => rows.buyerRow(p) }),
  kyc: rule({ schema: payloads.kycPayload, entityId: (p) => p.buyer.uuid, eventTime: () => undefined, row: (p) => rows.kycRow(p) }),
  applicant: rule({ schema: payloads.applicantPayload, entityId: (p) => p.applicant.uuid, eventTime: () => undefined, row: (p) => rows.applicantRow(p) }),
  factoring: rule({ schema: payloads.factoringPayload, entityId: (p) => p.factoring_uuid, eventTime: () => undefined, row: (p) => rows.factoringRow(p) }),
  billing_configuration: rule({
    schema: payloads.billingConfigurationPayload,
    entityId: (p) => p.billing_configuration_uuid,
    eventTime: (p) => p.event_time,
    row: (p, t) => rows.billingConfigurationRow(p, required(t)),
  }),
};

/**
 * Decides what a verified delivery is. Only bodies that are not JSON are refused; any JSON whose
 * topic we do not know, or whose shape drifted from the spec, is still stored (with its status),
 * so a provider change never loses a delivery.
 */
export function classifyDelivery(rawBody: Buffer): Classification {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch (error) {
    return { ok: false, reason: 'invalid_json', error: (error as Error).message };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: true, status: 'invalid_shape', topic: null, error: 'body is not a JSON object' };
  }
  const topicValue = (body as Record<string, unknown>).topic;
  if (typeof topicValue !== 'string') return { ok: true, status: 'invalid_shape', topic: null, error: 'topic is missing or not a string' };
  const family = familyOf(topicValue);
  if (!family) return { ok: true, status: 'unknown_topic', topic: topicValue.slice(0, 200), error: `unknown topic ${JSON.stringify(topicValue.slice(0, 200))}` };
  const familyRule = RULES[family];
  const parsed = familyRule.schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: true, status: 'invalid_shape', topic: topicValue, error: `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}` };
  }
  const rawTime = familyRule.eventTime(parsed.data);
  const eventTime = rawTime === undefined ? undefined : parseEventTime(rawTime);
  const entityId = familyRule.entityId(parsed.data).toLowerCase();
  return {
    ok: true,
    status: 'parsed',
    topic: topicValue,
    event: {
      key: eventKey(topicValue, entityId, eventTime, rawBody),
      entityType: family,
      entityId,
      eventTime,
      typed: familyRule.row(parsed.data, eventTime),
    },
  };
}
