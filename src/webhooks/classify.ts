import { hash } from 'node:crypto';
import type { ZodType } from 'zod';
import { parseEventTime, type EventTime } from './event-time.js';
import { NumberLiteral } from './money.js';
import { numberLiterals, onlyMemberLiteral, pathKey } from '../provider/number-literals.js';
import * as payloads from './payloads.js';
import { hasUnicodeEscape, storableText } from './storable.js';
import * as rows from './typed-rows.js';
import { familyOf, type TopicFamily } from '../provider/vocabulary.js';
import { typedRowProblem, type TypedRow } from './typed-rows.js';

export type ParseStatus = 'parsed' | 'unknown_topic' | 'invalid_shape';

/** Why a delivery was stored unparsed: a closed set, so it can label a metric. */
export const UNPARSED_REASONS = ['not_an_object', 'no_topic', 'unknown_topic', 'invalid_field', 'ledger_refused'] as const;
export type UnparsedReason = (typeof UNPARSED_REASONS)[number];

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
  | { ok: true; status: 'parsed'; topic: string; event: ClassifiedEvent; error?: undefined; reason?: undefined }
  | { ok: true; status: Exclude<ParseStatus, 'parsed'>; topic: string | null; error: string; reason: UnparsedReason; event?: undefined };

export type StorableClassification = Extract<Classification, { ok: true }>;

/**
 * The same delivery, stored without its parsed fields: for a delivery whose typed values the ledger
 * refused (group-commit.ts), so its raw bytes are still kept and it is answered 2xx.
 */
export function unparsed(c: StorableClassification, reason: UnparsedReason, error: string): StorableClassification {
  return { ok: true, status: 'invalid_shape', topic: c.topic, reason, error: storableText(error.slice(0, 1000)) };
}

/**
 * The one fallback of every writer of deliveries (the receiver's group commit, reparse) when the
 * ledger refuses a delivery's typed values: the same delivery stored unparsed, with the database's
 * message as its parse error, so its raw bytes are kept and a re-classification can try again.
 */
export function refusedByLedger(c: StorableClassification, error: unknown): StorableClassification {
  return unparsed(c, 'ledger_refused', `the ledger refused the parsed fields: ${(error as Error).message ?? String(error)}`);
}

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
  // A leading byte order mark is not JSON's, but RFC 8259 (section 8.1) lets a parser ignore it,
  // and a signed body that carries one is still the provider's JSON: stored and parsed, not refused.
  // The raw bytes, as signed, are stored as they came.
  const decoded = rawBody.toString('utf8');
  const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: 'invalid_json', error: (error as Error).message };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: true, status: 'invalid_shape', topic: null, reason: 'not_an_object', error: 'body is not a JSON object' };
  }
  const topicValue = (body as Record<string, unknown>).topic;
  if (typeof topicValue !== 'string') return { ok: true, status: 'invalid_shape', topic: null, reason: 'no_topic', error: 'topic is missing or not a string' };
  const family = familyOf(topicValue);
  if (!family) {
    // Sanitised after the cut: slicing can split a surrogate pair.
    const label = storableText(topicValue.slice(0, 200));
    return { ok: true, status: 'unknown_topic', topic: label, reason: 'unknown_topic', error: `unknown topic ${JSON.stringify(label)}` };
  }
  // One scan of the text decides both rare paths; most bodies have neither.
  const rare = RARE_FORMS.test(text);
  const escapes = rare && hasUnicodeEscape(text);
  if (rare) exactCents(body as Record<string, unknown>, text, escapes);
  const familyRule = RULES[family];
  const parsed = familyRule.schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return invalidField(topicValue, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const rawTime = familyRule.eventTime(parsed.data);
  const eventTime = rawTime === undefined ? undefined : parseEventTime(rawTime);
  const typed = familyRule.row(parsed.data, eventTime);
  const problem = typedRowProblem(typed, escapes);
  if (problem !== undefined) return invalidField(topicValue, problem);
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
      typed,
    },
  };
}

function invalidField(topic: string, error: string): Classification {
  return { ok: true, status: 'invalid_shape', topic, reason: 'invalid_field', error: storableText(error.slice(0, 1000)) };
}

const CENTS_DEPTH = 2; // top-level members and members of top-level objects (buyer.balance_cents)
// The payloads the spec shows have at most a few `*_cents` members.
const MAX_SHORT_CUTS = 8;
// A `\u` escape (storable.ts), or a `*_cents` member holding a number as the text shows it (with
// escapes the member's name may be spelt with them, so such a body is always visited).
const RARE_FORMS = /\\u|_cents"\s*:\s*[-\d]/;

/**
 * Replaces every JSON number in a `*_cents` member (at the depths the payloads have them) by its
 * literal text from the raw body, so money.ts judges the digits that were sent, not a double. Only
 * bodies whose text may show such a number (RARE_FORMS) are visited and scanned: invoice/complete,
 * and a provider sending numbers where the spec shows strings.
 */
function exactCents(body: Record<string, unknown>, text: string, escapes: boolean): void {
  let literals: Map<string, string> | undefined;
  let shortCuts = 0;
  const visit = (object: Record<string, unknown>, path: string[]) => {
    for (const key of Object.keys(object)) {
      const value = object[key];
      if (typeof value === 'number' && key.endsWith('_cents')) {
        // Escapes can spell a name two ways, so only a body without them may take the short cut.
        // Each short cut reads the whole text: past a few members, one scan reads them all (a
        // signed body of 1 MiB with 62,000 such members took 22 s member by member).
        const shortCut = !escapes && literals === undefined && shortCuts < MAX_SHORT_CUTS;
        if (shortCut) shortCuts += 1;
        let literal = shortCut ? onlyMemberLiteral(text, key) : undefined;
        if (literal === undefined) {
          literals ??= numberLiterals(text, CENTS_DEPTH, '_cents');
          literal = literals.get(pathKey([...path, key]));
        }
        object[key] = new NumberLiteral(literal ?? String(value));
      } else if (path.length + 1 < CENTS_DEPTH && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        visit(value as Record<string, unknown>, [...path, key]);
      }
    }
  };
  visit(body, []);
}
