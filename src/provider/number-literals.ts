/**
 * The exact text of JSON numbers, which JSON.parse does not keep: it reads 1e3, 1000.0 and 1000 all
 * as 1000, 12.0000000000000001 as 12, and 9007199254740993 as 9007199254740992. An amount is exact
 * only if its digits are read from the body itself.
 *
 * Scans a text that JSON.parse has already accepted (so it is well-formed JSON) and returns, for
 * every number that is the value of an object member whose name ends with `suffix`, reached
 * through objects only, at most `maxDepth` members deep, its literal text keyed by the member path
 * (pathKey). A repeated member
 * keeps its last value, as JSON.parse does. Iterative: any nesting the parser accepted is fine.
 */
export function numberLiterals(json: string, maxDepth: number, suffix = ''): Map<string, string> {
  const found = new Map<string, string>();
  // One frame per open container: its kind and, for objects, the member whose value comes next.
  const frames: { object: boolean; key: string | undefined }[] = [];
  // Containers not reachable through objects only, or too deep: numbers inside them are skipped.
  let untracked = 0;
  let expectKey = false;
  let i = 0;
  const n = json.length;
  while (i < n) {
    const c = json.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = stringEnd(json, i);
      if (expectKey) {
        const top = frames[frames.length - 1];
        const raw = json.slice(i + 1, end - 1);
        if (top) top.key = raw.includes('\\') ? (JSON.parse(json.slice(i, end)) as string) : raw;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const object = c === 0x7b;
      const parent = frames[frames.length - 1];
      if (untracked > 0 || (parent !== undefined && !parent.object) || frames.length >= maxDepth) untracked += 1;
      frames.push({ object, key: undefined });
      expectKey = object;
      i += 1;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      frames.pop();
      if (untracked > 0) untracked -= 1;
      expectKey = false;
      i += 1;
    } else if (c === 0x2c /* , */) {
      expectKey = frames[frames.length - 1]?.object ?? false;
      i += 1;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < n && isNumberChar(json.charCodeAt(end))) end += 1;
      const top = frames[frames.length - 1];
      if (untracked === 0 && top?.object && top.key !== undefined && top.key.endsWith(suffix)) {
        found.set(pathKey(frames.map((f) => f.key as string)), json.slice(i, end));
      }
      i = end;
    } else i += 1;
  }
  return found;
}

/** The key numberLiterals files a member path under. */
export function pathKey(path: readonly string[]): string {
  return JSON.stringify(path);
}

function stringEnd(json: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const c = json.charCodeAt(i);
    if (c === 0x5c /* \ */) i += 2;
    else if (c === 0x22 || Number.isNaN(c)) return i + 1;
    else i += 1;
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
}

/**
 * The literal text of the number after the member name `key`, when the name occurs exactly once in
 * the text and is spelt without escapes (the caller knows the body has no `\\u` escape and that the
 * member holds a number): then that one occurrence is the member, and its value's text is read in
 * place, without the scan. Otherwise undefined: use numberLiterals.
 */
export function onlyMemberLiteral(json: string, key: string): string | undefined {
  const needle = `"${key}"`;
  const at = json.indexOf(needle);
  if (at < 0 || json.indexOf(needle, at + 1) >= 0 || key.includes('\\') || key.includes('"')) return undefined;
  let i = skipSpace(json, at + needle.length);
  if (json.charCodeAt(i) !== 0x3a /* : */) return undefined;
  i = skipSpace(json, i + 1);
  let end = i;
  while (end < json.length && isNumberChar(json.charCodeAt(end))) end += 1;
  return end > i ? json.slice(i, end) : undefined;
}

function skipSpace(json: string, from: number): number {
  let i = from;
  for (let c = json.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = json.charCodeAt(++i));
  return i;
}
