/**
 * What Postgres can store of a parsed payload. JSON.parse accepts text that Postgres refuses, and a
 * refused value fails the whole batch statement (the delivery was then answered 500 and lost):
 * - NUL: `text` cannot hold it, and `json`/`jsonb` refuse the `\u0000` escape when a value is taken
 *   out as text or jsonb ("unsupported Unicode escape sequence");
 * - a UTF-16 surrogate without its pair ("N\ud800"): it has no UTF-8 form, and the json input
 *   function refuses the escape JSON.stringify writes for it ("invalid input syntax for type json");
 * - nesting deeper than JSON.stringify's recursion (a 10,000-deep value overflowed its stack).
 * Raw bytes are never affected: they travel as base64 into a bytea column.
 */

// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** Deepest nesting kept in a jsonb column. The spec's deepest (applicant.buyer.registered_address) is 2. */
export const MAX_JSONB_DEPTH = 32;

export const UNSTORABLE_TEXT = 'holds a NUL character or an unpaired UTF-16 surrogate, which Postgres cannot store';

export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** For labels that must be stored whatever they hold (an unknown topic, an error text): U+FFFD instead. */
export function storableText(value: string): string {
  return UNSTORABLE.test(value) ? value.replace(UNSTORABLE_ALL, '\ufffd') : value;
}

/**
 * Why a parsed JSON value cannot go into a jsonb column as it is, or undefined when it can. Walks
 * the value with its own stack, so no depth overflows this check. Non-finite numbers (1e400 parses
 * to Infinity) would become null in JSON.stringify: refused rather than silently changed.
 */
export function jsonbProblem(value: unknown): string | undefined {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const v = item.value;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return `a text value ${UNSTORABLE_TEXT}`;
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return 'a number beyond the double range';
    } else if (v !== null && typeof v === 'object') {
      if (item.depth >= MAX_JSONB_DEPTH) return `nested deeper than ${MAX_JSONB_DEPTH} levels`;
      if (Array.isArray(v)) {
        for (const element of v) stack.push({ value: element, depth: item.depth + 1 });
      } else {
        for (const [key, element] of Object.entries(v)) {
          if (!isStorableText(key)) return `a key ${UNSTORABLE_TEXT}`;
          stack.push({ value: element, depth: item.depth + 1 });
        }
      }
    }
  }
  return undefined;
}
