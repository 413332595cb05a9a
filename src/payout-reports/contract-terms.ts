import { z } from 'zod';
import { numberParts, percentMicros, plainDecimalParts } from './decimal.js';

/**
 * The merchant's contract with the provider (CONTRACT_TERMS): the MDR per payment method and
 * payment terms, the fixed fee per order and the VAT rate on the fee. docs/contract-terms.md is the
 * user's copy of this shape.
 */
export interface MdrEntry {
  paymentMethod: string | null;
  paymentTermsDays: number | null;
  /** Percent x 10,000 (2.5 % -> 25000). */
  rateMicros: number;
}

export interface ContractTerms {
  /** The currency the fixed fee is in; null: the terms apply to every payout's currency. */
  currency: 'EUR' | 'GBP' | null;
  mdr: MdrEntry[];
  fixedFeeCents: bigint;
  vatRateMicros: number;
  /**
   * Whether VAT on Discount is charged on the fixed fee too. The provider's merchant documentation
   * says "VAT on Discount: VAT on the fee", with Discount "the fee in money" and the fixed fee a
   * column of its own, which reads as Discount alone; a contract may charge it on both. null (not
   * set): either is accepted, so neither reading raises a finding the documents do not prove.
   */
  vatOnFixedFee: boolean | null;
}

/** A percent as a decimal string or a JSON number, up to 4 decimals, 0 to 100, in micros. */
const percent = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const micros = percentMicros(typeof value === 'number' ? numberParts(value) : plainDecimalParts(value));
  if (typeof micros === 'string') {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} ${micros} (a percent: "2.9" is 2.9 %)` });
    return z.NEVER;
  }
  return micros;
});

const mdrEntry = z
  .strictObject({
    payment_method: z.string().trim().min(1).optional(),
    payment_terms_days: z.number().int().positive().optional(),
    percent,
  })
  .refine((e) => e.payment_terms_days === undefined || e.payment_method !== undefined, {
    message: 'payment_terms_days needs a payment_method beside it (the entries are method and terms, method, or neither)',
    path: ['payment_terms_days'],
  });

const termsSchema = z
  .strictObject({
    currency: z.enum(['EUR', 'GBP']).optional(),
    mdr: z.array(mdrEntry).min(1),
    fixed_fee_cents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    vat_percent: percent,
    vat_on_fixed_fee: z.boolean().optional(),
  })
  .superRefine((terms, ctx) => {
    const seen = new Map<string, number>();
    for (const [i, e] of terms.mdr.entries()) {
      const key = JSON.stringify([e.payment_method ?? null, e.payment_terms_days ?? null]);
      const earlier = seen.get(key);
      if (earlier !== undefined) ctx.addIssue({ code: 'custom', path: ['mdr', i], message: `names the same payment method and terms as mdr[${earlier}]` });
      else seen.set(key, i);
    }
  });

export class ContractTermsError extends Error {
  override readonly name = 'ContractTermsError';
}

/** A zod issue's path as the JSON field it names: mdr[1].percent. */
const fieldOf = (path: readonly PropertyKey[]) =>
  path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)), '');

/** The contract's terms from their JSON text; refused with a ContractTermsError naming the field. */
export function parseContractTerms(text: string): ContractTerms {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ContractTermsError(`not JSON: ${(error as Error).message}`);
  }
  const parsed = termsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = fieldOf(issue.path);
    throw new ContractTermsError(field ? `${field}: ${issue.message}` : issue.message);
  }
  const terms = parsed.data;
  return {
    currency: terms.currency ?? null,
    mdr: terms.mdr.map((e) => ({ paymentMethod: e.payment_method ?? null, paymentTermsDays: e.payment_terms_days ?? null, rateMicros: e.percent })),
    fixedFeeCents: BigInt(terms.fixed_fee_cents),
    vatRateMicros: terms.vat_percent,
    vatOnFixedFee: terms.vat_on_fixed_fee ?? null,
  };
}

/**
 * The currency of the provider's money where nothing names one (a payout report without a Currency
 * column or currency signs, an invoice's factoring events): the contract's, else EUR. A payout is in
 * EUR or GBP (provider-merchant-docs.md, "Amounts are in the payout's currency (EUR or GBP)"), and a
 * merchant's contract is in the currency its payouts are in; the deduction rule judges such rows in
 * it too (reconcile/rules/payout-deduction-mismatch.ts), so every report says the same.
 */
export function unstatedCurrency(terms: { currency: string | null } | undefined | null): string {
  return terms?.currency ?? 'EUR';
}

/**
 * CONTRACT_TERMS's value: inline JSON when it starts with '{', else the path of a JSON file, read
 * here once at start. `readFile` is the one piece of I/O, passed in so the parsing stays pure.
 */
export function contractTermsFromSetting(value: string, readFile: (path: string) => string): ContractTerms {
  if (value.trimStart().startsWith('{')) return parseContractTerms(value);
  let text: string;
  try {
    text = readFile(value);
  } catch (error) {
    throw new ContractTermsError(`cannot read the file ${value}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return parseContractTerms(text);
  } catch (error) {
    throw new ContractTermsError(`${value}: ${(error as Error).message}`);
  }
}
