/**
 * What Postgres can store of a parsed payload. JSON.parse accepts text that Postgres refuses, and a
 * refused value fails the whole batch statement (the delivery was then answered 500 and lost):
 * - NUL: `text` cannot hold it, and `json`/`jsonb` refuse the `\u0000` escape when a value is taken
 *   out as text or jsonb ("unsupported Unicode escape sequence");
 * - a UTF-16 surrogate without its pair ("N\ud800"): it has no UTF-8 form, and the json input
 *   function refuses the escape JSON.stringify writes for it ("invalid input syntax for type json");
 * - nesting deeper than JSON.stringify's recursion (a 10,000-deep value overflowed its stack).
 * Raw bytes are never affected: they travel as base64 into a bytea column.
 *
 * Both kinds of text can only come from a `\u` escape: JSON forbids raw control characters in
 * strings, and Buffer#toString turns invalid UTF-8 (an encoded surrogate included) into U+FFFD.
 * So a body without `\u` needs no text check (hasUnicodeEscape), which keeps them off the hot path.
 */

import { isStorableText, storableText, UNSTORABLE_TEXT } from '../db/text.js';

export { isStorableText, storableText, UNSTORABLE_TEXT };

/** Deepest nesting kept in a jsonb column. The spec's deepest (applicant.buyer.registered_address) is 2. */
export const MAX_JSONB_DEPTH = 32;

/** Whether the JSON text has a `\u` escape, the only way its strings can hold what Postgres refuses. */
export function hasUnicodeEscape(json: string): boolean {
  return json.includes('\\u');
}


/**
 * What a parsed JSON value holds that a jsonb column cannot (completing "holds ..."), or undefined. Text
 * (strings and keys) is checked when `checkText`. Recursion stops at MAX_JSONB_DEPTH, so a
 * 10,000-deep value costs 32 frames, not a stack overflow. Non-finite numbers (1e400 parses to
 * Infinity) would become null in JSON.stringify: refused rather than silently changed. No
 * allocation per member: this runs for every order event's bank_account.
 */
export function jsonbProblem(value: unknown, checkText = true, depth = 0): string | undefined {
  if (typeof value === 'string') return checkText && !isStorableText(value) ? `text with ${UNSTORABLE_TEXT}` : undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'a number beyond the double range';
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_JSONB_DEPTH) return `nesting deeper than ${MAX_JSONB_DEPTH} levels`;
  if (Array.isArray(value)) {
    for (const element of value) {
      const problem = jsonbProblem(element, checkText, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  const object = value as Record<string, unknown>;
  // Parsed JSON: plain objects whose members are all own and enumerable.
  for (const key in object) {
    if (checkText && !isStorableText(key)) return `a member name with ${UNSTORABLE_TEXT}`;
    const problem = jsonbProblem(object[key], checkText, depth + 1);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
