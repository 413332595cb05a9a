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

  constructor(
    env: Env,
    seed: string,
    private readonly rates: PayloadVariantRates,
  ) {
    this.rng = new Prng(`${seed}/${env}/variants`);
  }

  apply(event: EmittedEvent): EmittedEvent {
    if (this.rates.numericAmounts > 0 && NUMERIC_AMOUNT_TOPICS.has(event.topic) && this.rng.chance(this.rates.numericAmounts)) {
      const amount = event.payload.amount_cents;
      // A JSON number is exact only up to 2^53; the simulator's amounts stay far below it.
      if (typeof amount === 'string' && BigInt(amount) <= MAX_EXACT && BigInt(amount) >= -MAX_EXACT) {
        return { ...event, payload: { ...event.payload, amount_cents: Number(amount) } };
      }
    }
    return event;
  }
}
