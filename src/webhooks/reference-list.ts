/**
 * A payout's external_reference_ids, "list of paid invoice references, sent as a string": a JSON
 * array (in the string or as the value itself), a bracketed list that is not JSON ("[INV-1, INV-2]"),
 * or a plain list separated by commas or semicolons. Whitespace is part of a reference
 * ("RE 2026-1, RE 2026-2" is two references, not four): only the separators split. The original
 * text stays in the delivery's raw body.
 */
export function parseReferenceList(value: string | readonly string[]): string[] {
  if (typeof value !== 'string') return cleaned(value);
  const trimmed = value.trim();
  if (trimmed.startsWith('[') && trimmed.endsWith(']')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return splitList(trimmed.slice(1, -1));
    }
    if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string' || typeof item === 'number')) {
      throw new Error('a JSON list of references must hold strings or numbers');
    }
    // A number's text is its literal as sent: through a double, 20260000000000000001 became
    // 20260000000000000000 and 1.50 became "1.5", a reference to another invoice or to none.
    const literals = numberTexts(trimmed);
    return cleaned(parsed.map((item) => (typeof item === 'string' ? item : (literals.shift() as string))));
  }
  return splitList(trimmed);
}

function splitList(text: string): string[] {
  return cleaned(text.split(/[,;]/));
}

function cleaned(items: readonly string[]): string[] {
  return items.map((item) => item.trim()).filter((item) => item.length > 0);
}

/**
 * The literal text of every number in a JSON list that JSON.parse accepted and whose items are all
 * strings or numbers (no nested containers), in order: outside strings, a number is the only token
 * that starts with a digit or a minus sign.
 */
function numberTexts(json: string): string[] {
  const found: string[] = [];
  let i = 0;
  while (i < json.length) {
    const c = json[i] as string;
    if (c === '"') {
      for (i += 1; json[i] !== '"'; i += json[i] === '\\' ? 2 : 1);
      i += 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const start = i;
      while (i < json.length && /[0-9eE.+-]/.test(json[i] as string)) i += 1;
      found.push(json.slice(start, i));
    } else i += 1;
  }
  return found;
}
