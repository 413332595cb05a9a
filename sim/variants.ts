import type { EmittedEvent } from './model.js';
import type { Env, PayloadVariantRates } from './options.js';
import { Prng } from './prng.js';

// The spec calls several *_cents fields "string holding an integer" but says nothing of these two.
const NUMERIC_AMOUNT_TOPICS = new Set(['payout/complete', 'payout/cancelled', 'invoice/payment']);
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Rewrites some payloads into another form the spec allows, before the fault layer serialises and
 * signs them. Draws come from their own stream (seed/env/variants), one per eligible event in
 * emission order, so the business, the faults and the ground truth are those of the same seed
 * without variants; only bytes change, and a repeat or a second event of a rewritten payload
 * carries the same form.
 */
export class PayloadVariants {
  private readonly rng: Prng;
  private readonly lists: Prng;
  private readonly accounts: Prng;

  constructor(
    env: Env,
    seed: string,
    private readonly rates: PayloadVariantRates,
  ) {
    this.rng = new Prng(`${seed}/${env}/variants`);
    this.lists = new Prng(`${seed}/${env}/variants/reference-lists`);
    this.accounts = new Prng(`${seed}/${env}/variants/uk-accounts`);
  }

  apply(event: EmittedEvent): EmittedEvent {
    let payload = event.payload;
    if (this.rates.numericAmounts > 0 && NUMERIC_AMOUNT_TOPICS.has(event.topic) && this.rng.chance(this.rates.numericAmounts)) {
      const amount = payload.amount_cents;
      // A JSON number is exact only up to 2^53; the simulator's amounts stay far below it.
      if (typeof amount === 'string' && BigInt(amount) <= MAX_EXACT && BigInt(amount) >= -MAX_EXACT) {
        payload = { ...payload, amount_cents: Number(amount) };
      }
    }
    // Later variants draw from streams of their own, so adding one leaves the earlier ones' draws alone.
    if (this.rates.referenceLists > 0 && event.topic.startsWith('payout/') && typeof payload.external_reference_ids === 'string' && this.lists.chance(this.rates.referenceLists)) {
      const refs = payload.external_reference_ids.split(',').filter((r) => r.length > 0);
      const forms = [JSON.stringify(refs), `[${refs.join(', ')}]`, refs.join('; ')];
      payload = { ...payload, external_reference_ids: forms[this.lists.int(0, forms.length - 1)] };
    }
    const account = payload.bank_account;
    // Order events only: their key is (topic, order, event_time); a factoring event's key is the hash of
    // its bytes, which a rewritten account would change.
    if (this.rates.ukBankAccounts > 0 && event.topic.startsWith('order/') && account && typeof account === 'object' && this.accounts.chance(this.rates.ukBankAccounts)) {
      const { account_holder, bank } = account as Record<string, unknown>;
      payload = { ...payload, bank_account: { account_holder, bank, sort_code: `${this.accounts.digits(2)}-${this.accounts.digits(2)}-${this.accounts.digits(2)}`, account_number: this.accounts.digits(8) } };
    }
    return payload === event.payload ? event : { ...event, payload };
  }
}
