import { z } from 'zod';

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;
const INT4_MAX = 2147483647;
const INT4_MIN = -2147483648;
const INTEGER_TEXT = /^-?(0|[1-9]\d*)$/;

/**
 * A JSON number as written in the raw body (provider/number-literals.ts). classifyDelivery puts one in place
 * of every number in a `*_cents` member before validation, so the amount is judged by its digits,
 * not by the double JSON.parse made of it.
 */
export class NumberLiteral {
  constructor(readonly text: string) {}

  /**
   * The number again where the member is kept as JSON (a `*_cents` member of `bank_account` or
   * `buyer`, which no schema reads as cents, goes to a jsonb column as the payload had it):
   * serialised as the object, it was stored as {"text": "1234"}. As exact as JSON.parse made it.
   */
  toJSON(): number {
    return Number(this.text);
  }
}

/**
 * Amounts in minor units, as a string holding an integer ("1234", what the spec shows for most
 * `*_cents` fields) or as a JSON number (gross_amount_cents, and what a provider may send for any
 * of them). Exact either way, never through a float: the text must be an integer in plain decimal
 * within the 64-bit range; "12.5", "1e3", " 12", "" and 12.5, 1e3, 1000.0 are refused, and a
 * number beyond 2^53 is taken from its digits (9007199254740993 stays ...993). Kept as the
 * canonical decimal string, which postgres.js passes to bigint columns unchanged.
 */
export const cents = z.unknown().transform((value, ctx) => {
  // One transform rather than a union: a union builds an issue for every branch that fails.
  const text = typeof value === 'string' ? value : value instanceof NumberLiteral ? value.text : undefined;
  if (text === undefined || !INTEGER_TEXT.test(text)) {
    ctx.addIssue({
      code: 'custom',
      message: value instanceof NumberLiteral ? `must be an integer number without fraction or exponent, got ${text?.slice(0, 40)}` : 'must be a string holding an integer, or an integer number',
    });
    return z.NEVER;
  }
  if (!fitsInt64(BigInt(text))) {
    ctx.addIssue({ code: 'custom', message: 'is beyond the 64-bit integer range' });
    return z.NEVER;
  }
  return text;
});

/** Day counts sent as strings ("30"): at most nine digits, so always within int4. */
export const smallIntegerString = z
  .string()
  .refine((v) => /^(0|[1-9]\d{0,8})$/.test(v), { message: 'must be a string holding a whole number of days' })
  .transform((v) => Number(v));

/** Day counts sent as JSON numbers (net_term, due_in_days): integers that fit the int4 columns. */
export const dayCount = z.number().int().min(INT4_MIN).max(INT4_MAX);

function fitsInt64(value: bigint): boolean {
  return value <= INT64_MAX && value >= INT64_MIN;
}
