import { z } from 'zod';

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;
const INTEGER_TEXT = /^-?(0|[1-9]\d*)$/;

/**
 * Amounts in minor units sent as strings holding an integer ("1234"). Parsed exactly, never
 * through a float: "12.5", "1e3", " 12", "" and values beyond bigint are refused. Kept as the
 * canonical decimal string, which postgres.js passes to bigint columns unchanged.
 */
export const integerString = z.string().refine((v) => INTEGER_TEXT.test(v) && fitsInt64(BigInt(v)), {
  message: 'must be a string holding an integer',
});

/** The one amount the spec sends as a JSON number (gross_amount_cents of invoice/complete). */
export const integerNumber = z
  .number()
  .refine((v) => Number.isSafeInteger(v), { message: 'must be an integer within 2^53' })
  .transform((v) => String(v));

/** Day counts sent as strings ("30"). */
export const smallIntegerString = z
  .string()
  .refine((v) => /^(0|[1-9]\d{0,8})$/.test(v), { message: 'must be a string holding a whole number of days' })
  .transform((v) => Number(v));

function fitsInt64(value: bigint): boolean {
  return value <= INT64_MAX && value >= INT64_MIN;
}
