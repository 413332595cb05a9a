import { numberLiterals } from '../../provider/number-literals.js';

/** How deep in objects numbers are compared by their digits (the jsonb columns' own limit). */
const LITERAL_DEPTH = 32;

/**
 * Whether a retry carries the same event as the delivery that was applied. A provider's retry
 * repeats its bytes; the event key (webhooks/classify.ts eventKey) is (topic, entity, event_time),
 * so a delivery with that key and other values is not a retry: it claims the same event with other
 * facts, and only the first applied counts. Bytes that differ only in JSON's freedoms (whitespace,
 * member order, `1.0` for `1`, an escaped character, a byte order mark) are the same event.
 *
 * Returns the top-level members whose values differ, sorted (`(body)` when either is not a JSON
 * object, which a delivery with an event key always is); [] when the two are the same JSON.
 * Bodies are decoded as the receiver decodes them (UTF-8, a leading byte order mark ignored). A
 * number in objects is compared by its digits, as the receiver reads a `*_cents` amount
 * (webhooks/money.ts): JSON.parse reads 9007199254740993 as ...992, and two amounts that differ
 * beyond 2^53 were the same to it. `1.0` and `1`, `1e2` and `100` are one number.
 */
export function differingMembers(applied: Buffer, retry: Buffer): string[] {
  if (applied.equals(retry)) return [];
  const a = parseObject(applied);
  const b = parseObject(retry);
  if (a === undefined || b === undefined) return ['(body)'];
  const names = [...new Set([...Object.keys(a.value), ...Object.keys(b.value)])];
  const differing = new Set(names.filter((name) => !Object.hasOwn(a.value, name) || !Object.hasOwn(b.value, name) || !sameJson(a.value[name], b.value[name])));
  const digitsA = numberLiterals(a.text, LITERAL_DEPTH);
  const digitsB = numberLiterals(b.text, LITERAL_DEPTH);
  for (const path of new Set([...digitsA.keys(), ...digitsB.keys()])) {
    const x = digitsA.get(path);
    const y = digitsB.get(path);
    // A path numeric on one side only differs already (sameJson compared the values).
    if (x === undefined || y === undefined || canonicalNumber(x) === canonicalNumber(y)) continue;
    differing.add((JSON.parse(path) as string[])[0]!);
  }
  return [...differing].sort();
}

function parseObject(bytes: Buffer): { value: Record<string, unknown>; text: string } | undefined {
  const decoded = bytes.toString('utf8');
  const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? { value: value as Record<string, unknown>, text } : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON number literal as plain decimal digits: `-1.50e2` is `-150`, `0.10` is `0.1`, `-0` is `0`. */
export function canonicalNumber(literal: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!match) return literal;
  const [, sign, whole, fraction = '', exponentText = '0'] = match;
  // No amount is written 1e400; such a literal is compared as written, never spelt out in zeros.
  if (Math.abs(Number(exponentText)) > 400) return literal;
  const digits = `${whole}${fraction}`;
  // The decimal point's place in `digits`, moved by the exponent (bounded: the parser read it).
  const point = whole!.length + Number(exponentText);
  const padded = point < 0 ? `${'0'.repeat(-point)}${digits}` : point > digits.length ? `${digits}${'0'.repeat(point - digits.length)}` : digits;
  const at = Math.max(point, 0);
  const integer = padded.slice(0, at).replace(/^0+/, '') || '0';
  const decimals = padded.slice(at).replace(/0+$/, '');
  const text = decimals === '' ? integer : `${integer}.${decimals}`;
  return sign === '-' && text !== '0' ? `-${text}` : text;
}

function sameJson(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    return x.every((v, i) => sameJson(v, y[i]));
  }
  const xo = x as Record<string, unknown>;
  const yo = y as Record<string, unknown>;
  const keys = Object.keys(xo);
  if (keys.length !== Object.keys(yo).length) return false;
  return keys.every((k) => Object.hasOwn(yo, k) && sameJson(xo[k], yo[k]));
}
