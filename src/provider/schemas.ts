import { z } from 'zod';

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

/** An element of the list is either an order or, like the single-order response, `{ order: {...} }`. */
const listedOrder = z.preprocess(
  (v) => (typeof v === 'object' && v !== null && 'order' in v && typeof (v as { order: unknown }).order === 'object' ? (v as { order: unknown }).order : v),
  orderSchema,
);

/** Public clients read `{"orders": [...]}`; a bare array is accepted too. */
export const ordersPageSchema = z.union([
  z.object({ orders: z.array(listedOrder) }).transform((v) => v.orders),
  z.array(listedOrder),
]);

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
