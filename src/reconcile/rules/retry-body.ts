/**
 * Whether a retry carries the same event as the delivery that was applied. A provider's retry
 * repeats its bytes; the event key (webhooks/classify.ts eventKey) is (topic, entity, event_time),
 * so a delivery with that key and other values is not a retry: it claims the same event with other
 * facts, and only the first applied counts. Bytes that differ only in JSON's freedoms (whitespace,
 * member order, `1.0` for `1`, an escaped character, a byte order mark) are the same event.
 *
 * Returns the top-level members whose values differ, sorted (`(body)` when either is not a JSON
 * object, which a delivery with an event key always is); [] when the two are the same JSON.
 * Bodies are decoded as the receiver decodes them (UTF-8, a leading byte order mark ignored) and
 * numbers are compared as JSON.parse reads them, as the receiver does.
 */
export function differingMembers(applied: Buffer, retry: Buffer): string[] {
  if (applied.equals(retry)) return [];
  const a = parseObject(applied);
  const b = parseObject(retry);
  if (a === undefined || b === undefined) return ['(body)'];
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return names.filter((name) => !Object.hasOwn(a, name) || !Object.hasOwn(b, name) || !sameJson(a[name], b[name]));
}

function parseObject(bytes: Buffer): Record<string, unknown> | undefined {
  const decoded = bytes.toString('utf8');
  try {
    const value: unknown = JSON.parse(decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
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
