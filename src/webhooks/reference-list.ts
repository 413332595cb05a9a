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
    return cleaned(parsed.map((item) => String(item)));
  }
  return splitList(trimmed);
}

function splitList(text: string): string[] {
  return cleaned(text.split(/[,;]/));
}

function cleaned(items: readonly string[]): string[] {
  return items.map((item) => item.trim()).filter((item) => item.length > 0);
}
