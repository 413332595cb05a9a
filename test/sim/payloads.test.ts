import { parseReferenceList } from '../../src/webhooks/reference-list.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_FAULT_RATES, NO_PAYLOAD_VARIANTS } from '../../sim/options.js';
import { startSimulator, type Simulator } from '../../sim/simulator.js';
import { DAY_MS } from '../../sim/time.js';

// Written from the spec, independently of sim/payloads.ts.
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
const intString = z.string().regex(/^-?\d+$/);
// payout/* and invoice/payment amount_cents: the spec does not say string, so the simulator sends
// some as JSON numbers (its numericAmounts variant).
const amount = z.union([intString, z.number().int().nonnegative()]);
const eventTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/);
const bankAccount = z.union([
  z.object({ account_holder: z.string(), bank: z.string(), bic: z.string(), iban: z.string().regex(/^DE\d{20}$/), bank_name: z.string().optional() }).strict(),
  // The spec's UK form: sort_code and account_number "only for UK buyers".
  z.object({ account_holder: z.string(), bank: z.string(), sort_code: z.string().regex(/^\d{2}-\d{2}-\d{2}$/), account_number: z.string().regex(/^\d{8}$/) }).strict(),
]);
const address = z.object({ country_code: z.string().length(2), city: z.string(), zip_code: z.string(), address_line1: z.string(), address_line2: z.string() }).strict();

const order = (topic: string, state: string, extra: z.ZodRawShape = {}) =>
  z
    .object({
      topic: z.literal(topic),
      order_uuid: uuid,
      order_state: z.literal(state),
      external_reference_id: z.string().min(1),
      event_time: eventTime,
      buyer: z.object({ uuid, name: z.string(), legal_form: z.string() }).strict(),
      ...extra,
    })
    .strict();
const invoice = (topic: string, extra: z.ZodRawShape = {}) =>
  z.object({ topic: z.literal(topic), invoice_uuid: uuid, order_uuid: uuid, external_reference_id: z.string(), event_time: eventTime, ...extra }).strict();
const payout = (topic: string) =>
  z
    .object({
      topic: z.literal(topic),
      payout_uuid: uuid,
      sepa_instruction_id: z.string().min(1),
      amount_cents: amount,
      external_reference_ids: z.string().regex(/^[^,]+(,[^,]+)*$/),
      event_time: eventTime,
    })
    .strict();
const buyerState = (topic: string, state: string) =>
  z
    .object({
      topic: z.literal(topic),
      buyer: z.object({ uuid, state: z.literal(state), external_reference_id: z.string(), company_name: z.string(), first_name: z.string(), last_name: z.string() }).strict(),
    })
    .strict();
const kyc = (topic: string, state: string) =>
  z.object({ topic: z.literal(topic), buyer: z.object({ uuid, kyc_state: z.literal(state), external_reference_id: z.string() }).strict() }).strict();
const applicant = (topic: string, state: string, extra: z.ZodRawShape = {}) =>
  z
    .object({
      topic: z.literal(topic),
      applicant: z
        .object({
          uuid,
          external_reference_id: z.string(),
          first_name: z.string(),
          last_name: z.string(),
          email: z.string().email(),
          state: z.literal(state),
          phone: z.string(),
          buyer: z.object({ uuid, state: z.string(), company_name: z.string(), registered_address: address }).strict(),
        })
        .strict(),
      ...extra,
    })
    .strict();
const factoring = (topic: string, state: string, extra: z.ZodRawShape = {}) =>
  z
    .object({
      topic: z.literal(topic),
      factoring_uuid: uuid,
      invoice_external_reference_id: z.string(),
      factoring_state: z.literal(state),
      invoice_amount_cents: intString,
      payment_method: z.string(),
      payment_terms: z.string().regex(/^\d+$/),
      ...extra,
    })
    .strict();

const SHAPES: Record<string, z.ZodType> = {
  'order/authorized': order('order/authorized', 'authorized', { bank_account: bankAccount.optional(), confirmation_link: z.string().url().optional() }),
  'order/pending': order('order/pending', 'pending', { pending_reason_description: z.string().min(1) }),
  'order/confirmed': order('order/confirmed', 'confirmed', { net_term: z.number().int().positive(), bank_account: bankAccount }),
  'order/declined': order('order/declined', 'declined'),
  'order/canceled': order('order/canceled', 'canceled'),
  'invoice/created': invoice('invoice/created'),
  'invoice/payment': invoice('invoice/payment', { amount_cents: amount }),
  'invoice/late': invoice('invoice/late'),
  'invoice/canceled': invoice('invoice/canceled'),
  'invoice/complete': invoice('invoice/complete', { gross_amount_cents: z.number().int().nonnegative() }),
  'invoice/reopened': invoice('invoice/reopened'),
  'payout/complete': payout('payout/complete'),
  'payout/cancelled': payout('payout/cancelled'),
  'buyer/accepted': buyerState('buyer/accepted', 'accepted'),
  'buyer/pending': buyerState('buyer/pending', 'pending'),
  'buyer/declined': buyerState('buyer/declined', 'declined'),
  'buyer/limit_updated': z
    .object({
      topic: z.literal('buyer/limit_updated'),
      buyer: z
        .object({ uuid, external_reference_id: z.string(), purchasing_limit_cents: intString, balance_cents: intString, max_collections_state: z.string(), max_purchase_value_cents: intString })
        .strict(),
    })
    .strict(),
  'kyc/accepted': kyc('kyc/accepted', 'accepted'),
  'kyc/pending': kyc('kyc/pending', 'pending'),
  'kyc/declined': kyc('kyc/declined', 'declined'),
  'applicant/pending': applicant('applicant/pending', 'pending', { reason: z.string() }),
  'applicant/accepted': applicant('applicant/accepted', 'accepted'),
  'factoring/pending': factoring('factoring/pending', 'manual_review'),
  'factoring/declined': factoring('factoring/declined', 'declined'),
  'factoring/approved': factoring('factoring/approved', 'approved', { invoice_uuid: uuid, bank_account: bankAccount }),
  'billing_configuration/created': z
    .object({
      topic: z.literal('billing_configuration/created'),
      schedule: z.string(),
      buyer_uuid: uuid,
      event_time: eventTime,
      due_in_days: z.number().int(),
      generation_delay_days: z.number().int(),
      payment_method_statement: z.enum(['bank_transfer', 'direct_debit']),
      billing_configuration_uuid: uuid,
    })
    .strict(),
};

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 'shapes', faults: DEFAULT_FAULT_RATES, business: { ordersPerDay: 150, newBuyersPerDay: 12 } });
  await sim.advance(21 * DAY_MS);
});
afterAll(async () => {
  await sim.stop();
});

describe('payload shapes', () => {
  it('every delivered body matches the spec shape of its topic', () => {
    const seen = new Map<string, number>();
    for (const d of sim.plannedDeliveries()) {
      const body = JSON.parse(d.body.toString('utf8')) as { topic: string };
      expect(body.topic).toBe(d.topic);
      const shape = SHAPES[body.topic];
      expect(shape, `no shape for ${body.topic}`).toBeDefined();
      const result = shape!.safeParse(body);
      expect(result.success, `${body.topic}: ${JSON.stringify(result.error?.issues)}`).toBe(true);
      seen.set(body.topic, (seen.get(body.topic) ?? 0) + 1);
    }
    // kyc/approved is listed by the spec without a payload; the simulator sends kyc/accepted instead.
    const expected = Object.keys(SHAPES);
    expect(expected.filter((t) => !seen.has(t))).toEqual([]);
  });

  it('invoice totals are JSON numbers; payout and payment amounts are integer strings, some JSON numbers', () => {
    const raw = sim.plannedDeliveries().map((d) => d.body.toString('utf8'));
    const complete = raw.find((b) => b.includes('"invoice/complete"'));
    expect(complete).toMatch(/"gross_amount_cents":\d+[,}]/);
    for (const topic of ['"payout/complete"', '"invoice/payment"']) {
      const bodies = raw.filter((b) => b.includes(topic));
      const numbers = bodies.filter((b) => /"amount_cents":\d+[,}]/.test(b)).length;
      const strings = bodies.filter((b) => /"amount_cents":"\d+"/.test(b)).length;
      expect(numbers + strings, topic).toBe(bodies.length);
      // The default rate is 0.2: both forms, numbers the fewer.
      expect(numbers, topic).toBeGreaterThan(0);
      expect(strings, topic).toBeGreaterThan(numbers);
    }
  });

  it('payload variants change bytes only: same business, same amounts, references and holders, same ground truth', async () => {
    const plain = await startSimulator({ seed: 'shapes', faults: DEFAULT_FAULT_RATES, payloadVariants: NO_PAYLOAD_VARIANTS, business: { ordersPerDay: 150, newBuyersPerDay: 12 } });
    try {
      await plain.advance(21 * DAY_MS);
      const withVariants = sim.plannedDeliveries();
      const without = plain.plannedDeliveries();
      expect(without.length).toBe(withVariants.length);
      let rewritten = 0;
      without.forEach((d, i) => {
        const v = withVariants[i]!;
        expect({ topic: v.topic, key: v.eventKey, due: v.dueAt, variant: v.variant }).toEqual({ topic: d.topic, key: d.eventKey, due: d.dueAt, variant: d.variant });
        if (v.body.equals(d.body)) return;
        rewritten += 1;
        const a = JSON.parse(d.body.toString('utf8'));
        const b = JSON.parse(v.body.toString('utf8'));
        const same = { ...b };
        if (typeof b.amount_cents === 'number') same.amount_cents = String(b.amount_cents);
        else expect(b.amount_cents).toEqual(a.amount_cents);
        if (b.external_reference_ids !== undefined && b.external_reference_ids !== a.external_reference_ids) {
          expect(parseReferenceList(b.external_reference_ids)).toEqual(parseReferenceList(a.external_reference_ids));
          same.external_reference_ids = a.external_reference_ids;
        }
        if (b.bank_account?.sort_code !== undefined) {
          expect({ holder: b.bank_account.account_holder, bank: b.bank_account.bank }).toEqual({ holder: a.bank_account.account_holder, bank: a.bank_account.bank });
          same.bank_account = a.bank_account;
        }
        expect(same).toEqual(a);
      });
      expect(rewritten).toBeGreaterThan(0);
      expect(JSON.stringify(plain.groundTruth())).toBe(JSON.stringify(sim.groundTruth()));
    } finally {
      await plain.stop();
    }
  });
});

describe("the simulator's payload variants against sim/README.md", () => {
  // sim/README.md's "Payload variants" table is where a reader learns which forms the payloads take
  // by default: a variant the simulator has but the table leaves out contradicts "follow the spec".
  it('documents every payload variant in the Payload variants table', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile('sim/README.md', 'utf8');
    const table = readme.slice(readme.indexOf('## Payload variants'), readme.indexOf('## The business'));
    const undocumented = Object.keys(NO_PAYLOAD_VARIANTS).filter((name) => !table.includes(`| \`${name}\` |`));
    expect(undocumented).toEqual([]);
  });
});
