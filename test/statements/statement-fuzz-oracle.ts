import fc from 'fast-check';
import { parseStatement } from '../../src/statements/detect.js';
import { StatementFormatError, type ParsedStatement, type StatementLine, type Totals } from '../../src/statements/types.js';
import { statementFuzzCaseArb, type StatementFuzzCase } from './statement-fuzz-cases.js';

/**
 * What the statement fuzz test demands of one parse: a refusal is a StatementFormatError with a
 * short message; an accepted file's lines are storable (dates Postgres takes, non-negative integer
 * cents, no NUL) and add up, per statement, currency and direction, to the booked totals the
 * product checks, and to the difference between the statement's own opening and closing balances;
 * a re-dressed file is read as the statement it came from; an entity trick is refused.
 */

/** The case of index `i` under `seed`: each case is its own sample, so one can be rerun alone. */
export function fuzzCase(seed: number, i: number): StatementFuzzCase {
  return fc.sample(statementFuzzCaseArb, { numRuns: 1, seed: (Math.imul(seed, 0x9e3779b1) + i) | 0 })[0]!;
}

export interface Judgement {
  outcome: 'accepted' | 'refused';
  /** the refusal's message with its particulars (values, numbers, ids) blanked, for counting */
  reason: string;
  message: string;
  problems: string[];
  parsed: ParsedStatement | null;
}

// A refusal quotes what it refuses; a message the size of a hostile field would fill the
// inbox's .error file and every log line with it.
export const MAX_MESSAGE_CHARS = 1000;

/** The message without what varies from file to file, so equal reasons count together. */
export function reasonOf(message: string): string {
  return message
    .replace(/'[^']*'/g, "'…'")
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+:\d+: /g, '')
    .replace(/camt\.053 statement [^\s:]+/g, 'camt.053 statement S')
    .replace(/(?<![:.\w])[-+]?\d+(?:[.,]\d+)*(?!\w)/g, 'N')
    .replace(/\(:28C: [^)]*\)/g, '(:28C: …)')
    .slice(0, 120);
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** A date Postgres' date type takes as written: YYYY-MM-DD of a real day, year 1 to 9999. */
export function storableDate(d: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(d);
  if (!m) return false;
  const [y, mo, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || day < 1 || day > DAYS_IN_MONTH[mo - 1]!) return false;
  return !(mo === 2 && day === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)));
}
const storableInstant = (v: string | null) => v === null || (/^\d{4}-\d{2}-\d{2}T/.test(v) && storableDate(v.slice(0, 10)) && !Number.isNaN(Date.parse(v)));

function add(t: Totals, l: Pick<StatementLine, 'currency' | 'direction' | 'amountCents'>): void {
  const v = t.get(l.currency) ?? { credit: 0n, debit: 0n };
  v[l.direction] += l.amountCents;
  t.set(l.currency, v);
}
const show = (t: Totals) => JSON.stringify([...t].map(([c, v]) => [c, String(v.credit), String(v.debit)]));
const equalTotals = (a: Totals, b: Totals) => {
  const nonzero = (t: Totals) => [...t].filter(([, v]) => v.credit !== 0n || v.debit !== 0n).sort(([x], [y]) => (x < y ? -1 : 1));
  return JSON.stringify(nonzero(a).map(([c, v]) => [c, String(v.credit), String(v.debit)])) === JSON.stringify(nonzero(b).map(([c, v]) => [c, String(v.credit), String(v.debit)]));
};

/**
 * The opening and closing balance (signed cents) a statement's identity carries: MT940
 * '…|openingCents|closingDate|closingCents|currency', CAMT '…|openingCents|closingCents' (empty
 * when the statement has none).
 */
function balancesOf(format: ParsedStatement['format'], identity: string): { opening: bigint; closing: bigint; currency: string | null } | null {
  const parts = identity.split('|');
  const int = (v: string | undefined) => (v !== undefined && /^-?\d+$/.test(v) ? BigInt(v) : null);
  if (format === 'mt940') {
    const [opening, closing] = [int(parts.at(-4)), int(parts.at(-2))];
    return opening !== null && closing !== null ? { opening, closing, currency: parts.at(-1) ?? null } : null;
  }
  if (format === 'camt053') {
    const [opening, closing] = [int(parts.at(-2)), int(parts.at(-1))];
    return opening !== null && closing !== null ? { opening, closing, currency: null } : null;
  }
  return null;
}

function acceptedProblems(c: StatementFuzzCase, p: ParsedStatement): string[] {
  const problems: string[] = [];
  const perSection = p.sections.map((): Totals => new Map());
  for (const [i, l] of p.lines.entries()) {
    const at = `line ${i + 1} (${l.where ?? '?'})`;
    if (typeof l.amountCents !== 'bigint' || l.amountCents < 0n) problems.push(`${at}: amount ${String(l.amountCents)}`);
    if (l.direction !== 'credit' && l.direction !== 'debit') problems.push(`${at}: direction ${String(l.direction)}`);
    if (typeof l.currency !== 'string' || l.currency === '') problems.push(`${at}: currency '${l.currency}'`);
    if (!storableDate(l.bookingDate)) problems.push(`${at}: booking date '${l.bookingDate}' is not a date Postgres stores`);
    if (l.valueDate !== null && !storableDate(l.valueDate)) problems.push(`${at}: value date '${l.valueDate}' is not a date Postgres stores`);
    for (const [k, v] of Object.entries(l)) if (typeof v === 'string' && v.includes('\u0000')) problems.push(`${at}: NUL in ${k}`);
    for (const [k, v] of Object.entries(l)) if (typeof v === 'string' && /lollol|root:/.test(v)) problems.push(`${at}: an entity was expanded into ${k}`);
    const totals = perSection[l.section];
    if (!totals) problems.push(`${at}: section ${l.section} of ${p.sections.length}`);
    else add(totals, l);
  }
  for (const [i, s] of p.sections.entries()) {
    const lines = perSection[i]!;
    if (!equalTotals(lines, s.booked)) problems.push(`statement ${i + 1}: lines add up to ${show(lines)}, booked ${show(s.booked)}`);
    if (!storableInstant(s.periodFrom) || !storableInstant(s.periodTo)) problems.push(`statement ${i + 1}: period ${s.periodFrom} .. ${s.periodTo}`);
    // A statement read as balanced carries both balances in its identity, which must agree with its
    // lines; one read as unchecked must really lack one; none is unbalanced without acceptUnbalanced.
    const b = balancesOf(p.format, s.identity);
    if (s.balances?.state === 'unbalanced') problems.push(`statement ${i + 1}: read as unbalanced without acceptUnbalanced`);
    if (s.balances?.state === 'balanced' && !b) problems.push(`statement ${i + 1}: read as balanced, but its identity ${s.identity.slice(0, 120)} names no two balances`);
    if (s.balances?.state === 'unchecked' && b && !/\|\|/.test(s.identity)) problems.push(`statement ${i + 1}: read as unchecked, but it has both balances`);
    if (b && s.balances?.state !== 'unchecked') {
      const moved = b.closing - b.opening;
      const currencies = b.currency ? [b.currency] : [...new Set([...lines.keys(), 'EUR'])];
      const net = (ccy: string) => (lines.get(ccy)?.credit ?? 0n) - (lines.get(ccy)?.debit ?? 0n);
      if (!currencies.some((ccy) => net(ccy) === moved)) {
        problems.push(`statement ${i + 1}: balances move by ${moved} cents, its lines by ${currencies.map((ccy) => `${net(ccy)} ${ccy}`).join(', ')}`);
      }
    }
  }
  if (c.expected) {
    const all: Totals = new Map();
    for (const l of p.lines) add(all, l);
    const got = { lines: p.lines.length, credit: all.get('EUR')?.credit ?? 0n, debit: all.get('EUR')?.debit ?? 0n };
    if (got.lines !== c.expected.lines || got.credit !== c.expected.credit || got.debit !== c.expected.debit || all.size > 1) {
      problems.push(`re-dressed statement read as ${got.lines} lines, credits ${got.credit}, debits ${got.debit} (${show(all)}); it holds ${c.expected.lines}, ${c.expected.credit}, ${c.expected.debit}`);
    }
  }
  if (c.entityTrick) problems.push('an entity reference was accepted');
  if (c.mustRefuse) problems.push(`accepted a statement that must be refused ('${c.mustRefuse}…')`);
  return problems;
}

// A refusal about a value of one entry or balance names where it is: the CSV row, the MT940
// message (and field), the CAMT statement (and entry), the XML line and column.
const ABOUT_A_VALUE = /amount|date|direction|balance|CdtDbtInd|:6\d[A-Z]?:/i;
const A_PLACE = /^(CSV row \d+|MT940 message \d+|camt\.053 statement |not well-formed XML: \d+:\d+:)/;

export function judgeParse(c: StatementFuzzCase): Judgement {
  let parsed: ParsedStatement;
  try {
    parsed = parseStatement(c.bytes);
  } catch (error) {
    const e = error as Error;
    const message = typeof e?.message === 'string' ? e.message : String(error);
    const problems: string[] = [];
    if (!(error instanceof StatementFormatError)) problems.push(`threw ${e?.name ?? typeof error} instead of StatementFormatError: ${message.slice(0, 300)}`);
    if (message.trim() === '') problems.push('refused without a message');
    if (message.length > MAX_MESSAGE_CHARS) problems.push(`refusal message of ${message.length} characters: ${message.slice(0, 200)}…`);
    if (c.expected) problems.push(`re-dressed statement refused: ${message.slice(0, 300)}`);
    if (c.mustRefuse && !message.startsWith(c.mustRefuse)) problems.push(`refused, but not as '${c.mustRefuse}…': ${message.slice(0, 300)}`);
    if (ABOUT_A_VALUE.test(message) && !A_PLACE.test(message) && !message.startsWith('unknown format')) problems.push(`refusal without its place: ${message.slice(0, 300)}`);
    return { outcome: 'refused', reason: reasonOf(message), message, problems, parsed: null };
  }
  return { outcome: 'accepted', reason: 'accepted', message: '', problems: acceptedProblems(c, parsed), parsed };
}

/** The sum of a parse's lines per currency and direction (what an import must store in all). */
export function parsedTotals(p: ParsedStatement): Totals {
  const t: Totals = new Map();
  for (const l of p.lines) add(t, l);
  return t;
}
export { equalTotals, show as showTotals };
