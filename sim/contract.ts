import { z } from 'zod';
import { mulDivRound } from './money.js';

/**
 * The merchant's contract with the provider, in the shape of the daemon's CONTRACT_TERMS setting
 * (the simulator reads none of the product's code, so the shape is restated here): the merchant
 * discount rate (MDR) per payment method and payment term, the fixed fee per order and the VAT rate
 * on the provider's fee. The simulated provider deducts exactly this from each payout unless a fault
 * says otherwise.
 */
const percent = z
  .union([z.string(), z.number()])
  .transform((v, ctx) => {
    const text = typeof v === 'number' ? String(v) : v.trim();
    const m = /^(\d{1,3})(?:\.(\d{1,4}))?$/.exec(text);
    const micros = m ? Number(m[1]) * 10_000 + Number((m[2] ?? '').padEnd(4, '0')) : Number.NaN;
    if (!(micros >= 0 && micros <= 1_000_000)) {
      ctx.addIssue({ code: 'custom', message: `expected a percent from 0 to 100 with up to 4 decimals, got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return micros;
  });

export const contractTermsSchema = z
  .object({
    currency: z.enum(['EUR', 'GBP']).default('EUR'),
    mdr: z
      .array(
        z
          .object({
            payment_method: z.string().min(1).optional(),
            payment_terms_days: z.number().int().min(0).max(3650).optional(),
            percent,
          })
          .strict(),
      )
      .min(1),
    fixed_fee_cents: z.number().int().min(0).max(1_000_000),
    vat_percent: percent,
    // The simulated provider charges VAT on the fixed fee too unless told not to; the daemon is told
    // the same through CONTRACT_TERMS (the demo passes these terms), so it judges strictly.
    vat_on_fixed_fee: z.boolean().default(true),
  })
  .strict();

/** Parsed terms: percents as micros (2.9 % is 29,000), money in cents. */
export type ContractTerms = z.output<typeof contractTermsSchema>;
/** The terms as written (percents as decimal strings or numbers). */
export type ContractTermsInput = z.input<typeof contractTermsSchema>;

/** The simulator's default contract, documented in README.md. */
export const DEFAULT_CONTRACT_TERMS: ContractTermsInput = {
  currency: 'EUR',
  mdr: [
    { payment_method: 'bank_transfer', payment_terms_days: 30, percent: '2.5' },
    { payment_method: 'bank_transfer', percent: '2.9' },
    { percent: '3.0' },
  ],
  fixed_fee_cents: 30,
  vat_percent: '19',
  vat_on_fixed_fee: true,
};

export function parseContractTerms(input: ContractTermsInput | undefined): ContractTerms {
  const parsed = contractTermsSchema.safeParse(input ?? DEFAULT_CONTRACT_TERMS);
  if (!parsed.success) throw new Error(`contractTerms: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/**
 * The MDR in micros for an invoice: the most specific entry wins (method and terms, then method,
 * then the entry with neither). The simulated provider charges 0 where no entry matches.
 */
export function mdrMicros(terms: ContractTerms, paymentMethod: string, paymentTermsDays: number): number {
  const exact = terms.mdr.find((e) => e.payment_method === paymentMethod && e.payment_terms_days === paymentTermsDays);
  const method = terms.mdr.find((e) => e.payment_method === paymentMethod && e.payment_terms_days === undefined);
  const fallback = terms.mdr.find((e) => e.payment_method === undefined && e.payment_terms_days === undefined);
  return (exact ?? method ?? fallback)?.percent ?? 0;
}

export interface InvoiceDeductions {
  rateMicros: number;
  discountCents: bigint;
  transactionFeeCents: bigint;
  vatCents: bigint;
  totalDeductionsCents: bigint;
  transferCents: bigint;
}

/**
 * The arithmetic for one invoice row: Discount = amount x rate and VAT = Discount x VAT % (with
 * `vatOnFixedFee`, (Discount + fixed fee) x VAT %), each rounded half away from zero to the cent;
 * the transfer is the amount less all three.
 */
export function invoiceDeductions(amountCents: bigint, rateMicros: number, transactionFeeCents: bigint, vatMicros: number, vatOnFixedFee = true): InvoiceDeductions {
  const discountCents = mulDivRound(amountCents, BigInt(rateMicros), 1_000_000n);
  const vatCents = mulDivRound(discountCents + (vatOnFixedFee ? transactionFeeCents : 0n), BigInt(vatMicros), 1_000_000n);
  const totalDeductionsCents = discountCents + transactionFeeCents + vatCents;
  return { rateMicros, discountCents, transactionFeeCents, vatCents, totalDeductionsCents, transferCents: amountCents - totalDeductionsCents };
}
