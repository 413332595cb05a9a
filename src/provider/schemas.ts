import { z } from 'zod';
import { isStorableText, MAX_INDEXED_TEXT_LENGTH, storableText } from '../db/text.js';

/**
 * Response shapes. The spec shows only a few fields, so every object tolerates (and drops) fields
 * it does not list; only what the ledger needs is required.
 */

// z.guid(), not z.uuid(): the provider's UUIDs need not carry an RFC 4122 variant nibble, and
// order_snapshots.order_uuid (a Postgres uuid) accepts any 8-4-4-4-12 hex string.
export const orderSchema = z.object({
  uuid: z.guid(),
  // Any state string: the real API reports more than the spec lists (shipped, complete, ...).
  state: z.string().min(1),
  external_reference_id: z.string().nullish(),
});

export type ProviderOrder = z.infer<typeof orderSchema>;

/**
 * An element of the list is either an order or, like the single-order response, `{ order: {...} }`.
 * Only an element without a uuid of its own whose `order` is an object is the wrapper: an order
 * with an extra member named `order` (null, or an object of its own) is an order, whose unknown
 * fields are dropped like any other's. Taken for the wrapper, `"order": null` failed its page on
 * every poll.
 */
function unwrapped(item: unknown): unknown {
  return isRecord(item) && !('uuid' in item) && isRecord(item.order) ? item.order : item;
}

const listedOrder = z.preprocess(unwrapped, orderSchema);

/**
 * Public clients read `{"orders": [...]}`; a bare array is accepted too, and so is the one shape
 * provider-api.md gives ("Order response shape: an object with a key order holding uuid, state,
 * external_reference_id"), as a page of that one order.
 */
export const ordersPageSchema = z.union([
  z.object({ orders: z.array(listedOrder) }).transform((v) => v.orders),
  z.array(listedOrder),
  z.object({ order: orderSchema }).transform((v) => [v.order]),
]);

// zod's own z.guid() pattern, so the fast path below accepts exactly the strings the schema does.
const GUID = /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One listed order checked by hand, or undefined when it is anything but the plain, valid case. */
function plainOrder(item: unknown): ProviderOrder | undefined {
  const o = unwrapped(item);
  if (!isRecord(o)) return undefined;
  const { uuid, state, external_reference_id: ref } = o;
  if (typeof uuid !== 'string' || !GUID.test(uuid) || typeof state !== 'string' || state.length === 0) return undefined;
  if (ref === undefined) return 'external_reference_id' in o ? { uuid, state, external_reference_id: undefined } : { uuid, state };
  if (ref === null || typeof ref === 'string') return { uuid, state, external_reference_id: ref };
  return undefined;
}

/**
 * ordersPageSchema.parse, with a hand-written path for the plain valid page: at the provider's full
 * rate the schema's per-field machinery was a noticeable share of the poller's CPU (and of its
 * garbage). Anything the fast path does not recognise goes through the schema, which decides and
 * words the error; both give the same result for what the fast path accepts (test/provider/pure.test.ts).
 */
export function parseOrdersPage(json: unknown, onRepaired?: (uuid: string, field: 'state' | 'external_reference_id', repair: OrderRepair) => void): ProviderOrder[] {
  const list = isRecord(json) ? json.orders : json;
  let orders: ProviderOrder[] | undefined;
  if (Array.isArray(list)) {
    const out: ProviderOrder[] = [];
    for (const item of list) {
      const order = plainOrder(item);
      if (order === undefined) break;
      out.push(order);
    }
    if (out.length === list.length) orders = out;
  }
  return storableOrders(orders ?? ordersPageSchema.parse(json), onRepaired);
}

// Any surrogate or NUL: the cheap test that lets nearly every order skip the exact one.
const MAYBE_UNSTORABLE = /[\0\ud800-\udfff]/;

export type OrderRepair = 'unstorable' | 'too_long';

/**
 * An order whose text Postgres cannot store (a NUL, an unpaired surrogate: db/text.ts), or whose
 * state is too long for its index (a key of order_state_observations), would fail its whole batch on every poll, keeping its page-mates
 * out of the ledger. It is kept with U+FFFD in place of what cannot be stored, its state cut to
 * MAX_INDEXED_TEXT_LENGTH, so the order still counts as listed, and `onRepaired` is told.
 */
function storableOrders(orders: ProviderOrder[], onRepaired?: (uuid: string, field: 'state' | 'external_reference_id', repair: OrderRepair) => void): ProviderOrder[] {
  for (let i = 0; i < orders.length; i += 1) {
    const order = orders[i]!;
    const badState = MAYBE_UNSTORABLE.test(order.state) && !isStorableText(order.state);
    const longState = order.state.length > MAX_INDEXED_TEXT_LENGTH;
    const ref = order.external_reference_id;
    const badRef = typeof ref === 'string' && MAYBE_UNSTORABLE.test(ref) && !isStorableText(ref);
    if (!badState && !longState && !badRef) continue;
    // Cut first: a cut through a surrogate pair leaves half of it, which storableText then replaces.
    const state = badState || longState ? storableText(order.state.slice(0, MAX_INDEXED_TEXT_LENGTH)) : order.state;
    orders[i] = { ...order, state, ...(badRef ? { external_reference_id: storableText(ref) } : {}) };
    if (badState) onRepaired?.(order.uuid, 'state', 'unstorable');
    if (longState) onRepaired?.(order.uuid, 'state', 'too_long');
    if (badRef) onRepaired?.(order.uuid, 'external_reference_id', 'unstorable');
  }
  return orders;
}


/** The spec's error body: status plus errors[] of { name, details }. Both parts optional here. */
export const errorBodySchema = z.object({
  status: z.number().int().optional(),
  errors: z
    .array(
      z.object({
        name: z.union([z.string(), z.number()]).transform(String).catch('unknown'),
        details: z.string().catch(''),
      }),
    )
    .catch([]),
});

const secretString = z.string().min(1);
const secretItem = z.union([
  secretString,
  z.object({ webhook_secret: secretString }).transform((v) => v.webhook_secret),
  z.object({ secret: secretString }).transform((v) => v.secret),
  z.object({ key: secretString }).transform((v) => v.key),
]);

/**
 * GET /webhooks/keys: the spec does not show the body. Public clients read `{"webhook_secret": "…"}`;
 * a list (bare, or under webhook_secrets / keys / secrets, of strings or of such objects) is accepted
 * so a provider that rotates keys can hand over several.
 */
export const webhookKeysSchema = z.union([
  z.object({ webhook_secret: secretString }).transform((v) => [v.webhook_secret]),
  z.object({ webhook_secrets: z.array(secretItem).min(1) }).transform((v) => v.webhook_secrets),
  z.object({ keys: z.array(secretItem).min(1) }).transform((v) => v.keys),
  z.object({ secrets: z.array(secretItem).min(1) }).transform((v) => v.secrets),
  z.array(secretItem).min(1),
]);
