/**
 * What Postgres `text` (and `json`/`jsonb` taken out as text) cannot hold: a NUL, and a UTF-16
 * surrogate without its pair, which has no UTF-8 form. JavaScript strings can hold both (a `\u0000`
 * or `\ud800` escape in JSON, a lone surrogate in a request body); stored, the first fails the
 * statement and the second comes back as U+FFFD. Every writer of outside text checks it first, so
 * the refusal names the field instead of failing a statement (a 500, or a whole batch lost).
 */

// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
export const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const UNSTORABLE_TEXT = 'a NUL character or an unpaired UTF-16 surrogate, which Postgres cannot store';

/**
 * The longest outside text kept whole where it is a btree index key (a webhook's or a polled
 * order's state, references), in UTF-16 units: an index entry must stay under 2,704 bytes, and 512
 * units are at most 1,536 bytes of UTF-8.
 */
export const MAX_INDEXED_TEXT_LENGTH = 512;

export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** For text that must be stored whatever it holds (a label, an error text, a provider's field): U+FFFD instead. */
export function storableText(value: string): string {
  return UNSTORABLE.test(value) ? value.replace(UNSTORABLE_ALL, '\ufffd') : value;
}
