import fc from 'fast-check';
import { booked, camt, mt940, statementArb, type CamtLayout, type GenEntry, type GenStatement, type Mt940Layout, type Wrapper } from './generate.js';

/**
 * Hostile statement files for the statement fuzz test: a valid statement (generate.ts) rendered in
 * one of its formats and bank variants, then mutated as text (fields and elements removed,
 * duplicated or given hostile values, deep nesting, entity tricks, huge fields), encoded (UTF-8,
 * BOMs, UTF-16, a declared encoding) and mutated as bytes (truncation, flips, insertions,
 * deletions, NUL, invalid UTF-8). A case whose every change keeps the statement's meaning (a BOM,
 * another line end, CDATA, a namespace prefix) carries what the file must be read as.
 */
export type FuzzFormat = 'camt053' | 'mt940' | 'csv';

export interface StatementFuzzCase {
  /** format, rendering and mutations: 'mt940/swift:field-value:61:amount+flip' */
  label: string;
  /** the format of the statement the case was derived from */
  format: FuzzFormat;
  bytes: Buffer;
  /** set when every change was meaning-preserving: the lines and totals the file must be read as */
  expected: { lines: number; credit: bigint; debit: bigint } | null;
  /** the file references an entity its DTD declares (XXE, billion laughs): it must be refused */
  entityTrick: boolean;
  /** set when the unmutated statement must be refused (a CAMT without Acct): the start of the refusal */
  mustRefuse?: string | null;
}

interface TextMutation {
  name: string;
  benign: boolean;
  apply(text: string): string;
}
interface ByteMutation {
  name: string;
  benign: boolean;
  apply(bytes: Buffer): Buffer;
}

const seedNat = fc.nat({ max: 0x7fffffff });
const pickOf = <T>(items: readonly T[], n: number): T => items[n % items.length]!;

/** The k-th (mod count) match of `re` (global) in `text`, or null when there is none. */
function nth(text: string, re: RegExp, k: number): RegExpExecArray | null {
  const all = [...text.matchAll(re)];
  return all.length === 0 ? null : (all[k % all.length] as RegExpExecArray);
}
const splice = (text: string, at: number, remove: number, insert: string) => text.slice(0, at) + insert + text.slice(at + remove);

// ---------------------------------------------------------------------------------------------
// Hostile values

const AMOUNTS = [
  '', '-', '1', '0', '0.00', '1.2.3', '1,234.56', '1.234,56', '1.234', '1.2345', '1e5', '0x10', 'NaN', 'Infinity', '١٢.٠٠', ' 1.00', '1.00 ',
  '+1.00', '-1.00', '- 1.00', '9999999999999999.99', '99999999999999999999999999999999999999.00', '92233720368547758.08', '92233720368547758.07',
  `${'0'.repeat(400)}1.00`, '1'.repeat(4000), '10000000000.00', '10000000000.01', '.50', '5.', '1 000.00', "1'000.00", '1\u00a0000.00',
] as const;
const ISO_DATES = [
  '', '2026-13-01', '2026-00-10', '2026-02-30', '2026-02-29', '2024-02-29', '2026-04-31', '2026-03-00', '2026-03-32', '0000-01-01', '0001-01-01',
  '1899-12-31', '1979-12-31', '2080-01-01', '9999-12-31', '10000-01-01', '2026-3-2', '2026/03/02', '02.03.2026', '31.02.2026', '2026-03-02T25:61:00',
  '2026-03-02T10:00:00+99:00', '2026-03-02Z', 'garbage', '२०२६-०३-०२', '2026-03-02 ', ' 2026-03-02', '2026-03-02garbage', '+002026-03-02',
] as const;
const YYMMDD = ['', '261301', '260230', '260229', '240229', '260000', '260332', '999999', '26030', '2603021', 'abcdef', '000229', '791231', '800101'] as const;
const MMDD = ['1332', '0200', '0231', '9999', '0000', '0101', '1231', '12', 'ab12'] as const;
const CURRENCIES = ['', 'EURO', 'eur', 'USD', '€', 'E R', 'X'.repeat(5000), 'EU'] as const;

/** A long run of text: a huge field, a line without end, or subfields to make a parser loop. */
function longText(kind: number, n: number): string {
  return pickOf(
    [
      () => 'x'.repeat(n),
      () => '9'.repeat(n),
      () => ' '.repeat(n),
      () => '?20ab'.repeat(Math.ceil(n / 5)),
      () => '?20EREF+x'.repeat(Math.ceil(n / 9)),
      () => '/EREF/x'.repeat(Math.ceil(n / 7)),
      () => 'SVWZ+'.repeat(Math.ceil(n / 5)),
      () => ',;"'.repeat(Math.ceil(n / 3)),
      () => 'ü€'.repeat(Math.ceil(n / 2)),
      () => '<a>'.repeat(Math.ceil(n / 3)),
    ],
    kind,
  )();
}
const longSize = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1000, max: 20_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 20_000, max: 300_000 }) });

// ---------------------------------------------------------------------------------------------
// Renderings of a valid statement

const dec = (cents: bigint, sep: string) => {
  const a = cents < 0n ? -cents : cents;
  return `${a / 100n}${sep}${(a % 100n).toString().padStart(2, '0')}`;
};

interface CsvVariant {
  delimiter: ',' | ';';
  decimal: '.' | ',';
  quoteAll: boolean;
  /** no direction column: the amount carries the sign */
  signed: boolean;
  german: boolean;
  preamble: boolean;
  references: boolean;
  eol: '\r\n' | '\n';
}

/** A bank's CSV export of the statement: one row per booked entry, in the given dialect. */
function csvText(s: GenStatement, v: CsvVariant): string {
  const names = v.german
    ? ['Buchungstag', 'Valutadatum', 'Betrag', 'Waehrung', ...(v.signed ? [] : ['Soll/Haben']), 'Verwendungszweck', 'Auftragskonto', ...(v.references ? ['Bank Reference'] : [])]
    : ['booking_date', 'value_date', 'amount', 'currency', ...(v.signed ? [] : ['credit_debit']), 'end_to_end_reference', 'account_iban', ...(v.references ? ['entry_reference'] : [])];
  const quote = (cell: string) => (v.quoteAll || cell.includes(v.delimiter) || cell.includes('"') ? `"${cell.replaceAll('"', '""')}"` : cell);
  const date = (d: string) => (v.german ? `${d.slice(8, 10)}.${d.slice(5, 7)}.${d.slice(0, 4)}` : d);
  const rows = s.days.flatMap((d) =>
    d.entries.map((e) => {
      const amount = v.signed ? `${e.direction === 'debit' ? '-' : ''}${dec(e.cents, v.decimal)}` : dec(e.cents, v.decimal);
      const direction = v.german ? (e.direction === 'credit' ? 'H' : 'S') : e.direction === 'credit' ? 'CRDT' : 'DBIT';
      return [date(d.date), date(d.date), amount, 'EUR', ...(v.signed ? [] : [direction]), e.e2e ?? '', s.account, ...(v.references ? [e.ref ?? ''] : [])];
    }),
  );
  const preamble = v.preamble ? [`Kontoauszug${v.delimiter}${v.delimiter}`, `Konto${v.delimiter}${s.account}`, ''] : [];
  return [...preamble, names.map(quote).join(v.delimiter), ...rows.map((r) => r.map(quote).join(v.delimiter))].join(v.eol) + v.eol;
}

/** Pages :60M:/:62M: instead of one :60F:/:62F: message per day: one statement continued across messages. */
function chained(text: string): string {
  const opens = [...text.matchAll(/:60F:/g)];
  const closes = [...text.matchAll(/:62F:/g)];
  let out = text;
  // Right to left, so earlier indices stay valid.
  const edits = [...opens.slice(1).map((m) => ({ at: m.index, tag: ':60M:' })), ...closes.slice(0, -1).map((m) => ({ at: m.index, tag: ':62M:' }))].sort((a, b) => b.at - a.at);
  for (const e of edits) out = splice(out, e.at, 5, e.tag);
  return out;
}

interface Rendered {
  format: FuzzFormat;
  variant: string;
  text: string;
  /** the statement as rendered must be refused, with a message starting so */
  mustRefuse?: string;
}

// The standard layouts most often; the others banks write (generate.ts) in one case of three.
const CAMT_LAYOUTS: CamtLayout[] = ['standard', 'standard', 'standard', 'standard', 'standard', 'standard', 'no-dates', 'closing-only', 'no-account'];
const MT940_LAYOUTS: Mt940Layout[] = ['standard', 'standard', 'standard', 'standard', 'standard', 'standard', 'standard', 'standard', 'continued-28c', 'opening-only', 'no-balances', 'dutch'];

const renderArb = (s: GenStatement): fc.Arbitrary<Rendered> =>
  fc.oneof(
    fc.record({ daily: fc.boolean(), indent: fc.constantFrom('\n', '', '\n    ', '\r\n\t'), layout: fc.constantFrom(...CAMT_LAYOUTS) }).map(({ daily, indent, layout }) => {
      // Entries without dates are dated by their statement's period: one statement per day.
      const perDay = daily || layout === 'no-dates';
      return {
        format: 'camt053' as const,
        variant: `${perDay ? 'daily' : 'whole'}${layout === 'standard' ? '' : `-${layout}`}`,
        text: camt(s, perDay ? s.days.map((d) => [d]) : [s.days], '', layout).replace(/\n/g, indent),
        ...(layout === 'no-account' ? { mustRefuse: 'camt.053 statement S0: no Acct' } : {}),
      };
    }),
    fc
      .record({ wrapper: fc.constantFrom<Wrapper>('plain', 'swift', 'abn', 'ing', 'eof', 'rabo'), eol: fc.constantFrom('\r\n', '\n'), chain: fc.boolean(), layout: fc.constantFrom(...MT940_LAYOUTS) })
      .map(({ wrapper, eol, chain, layout: wanted }) => {
        // A statement without bookings written without balances would be no statement at all.
        const layout = wanted === 'no-balances' && s.days.every((d) => d.entries.length === 0) ? 'standard' : wanted;
        const text = mt940(s, wrapper, eol, layout);
        // The Rabobank wrapper has no message separators, so pages would merge into one message; pages need both balances.
        const pages = chain && s.days.length > 1 && wrapper !== 'rabo' && (layout === 'standard' || layout === 'continued-28c' || layout === 'dutch');
        return { format: 'mt940' as const, variant: `${wrapper}${pages ? '-pages' : ''}${layout === 'standard' ? '' : `-${layout}`}`, text: pages ? chained(text) : text };
      }),
    fc
      .record({
        delimiter: fc.constantFrom(',' as const, ';' as const),
        decimal: fc.constantFrom('.' as const, ',' as const),
        quoteAll: fc.boolean(),
        signed: fc.boolean(),
        german: fc.boolean(),
        preamble: fc.boolean(),
        references: fc.boolean(),
        eol: fc.constantFrom('\r\n' as const, '\n' as const),
      })
      .map((v) => ({ format: 'csv' as const, variant: `${v.german ? 'de' : 'en'}${v.delimiter === ';' ? '-semicolon' : ''}${v.signed ? '-signed' : ''}`, text: csvText(s, v) })),
  );

/** What a faithful reading of the statement gives: CAMT splits a batch whose details add up to it. */
function truth(s: GenStatement, format: FuzzFormat): NonNullable<StatementFuzzCase['expected']> {
  const entries = s.days.flatMap((d) => d.entries);
  const split = (e: GenEntry) => e.txs !== null && e.txs.length > 1 && e.txs.reduce((a, b) => a + b, 0n) === e.cents;
  const lines = entries.reduce((n, e) => n + (format === 'camt053' && split(e) ? e.txs!.length : 1), 0);
  return { lines, ...booked(s.days) };
}

// ---------------------------------------------------------------------------------------------
// Text mutations, by format

const textMutation = (name: string, apply: (text: string) => string, benign = false): TextMutation => ({ name, benign, apply });

/** Whole lines: removed, duplicated, swapped, or a long one inserted (any format). */
const lineMutationArb: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.tuple(seedNat).map(([k]) => textMutation('line-remove', (t) => {
    const lines = t.split('\n');
    lines.splice(k % lines.length, 1);
    return lines.join('\n');
  })),
  fc.tuple(seedNat).map(([k]) => textMutation('line-duplicate', (t) => {
    const lines = t.split('\n');
    const i = k % lines.length;
    lines.splice(i, 0, lines[i]!);
    return lines.join('\n');
  })),
  fc.tuple(seedNat, seedNat).map(([a, b]) => textMutation('line-swap', (t) => {
    const lines = t.split('\n');
    const i = a % lines.length;
    const j = b % lines.length;
    [lines[i], lines[j]] = [lines[j]!, lines[i]!];
    return lines.join('\n');
  })),
  fc.tuple(seedNat, seedNat, longSize).map(([k, kind, n]) => textMutation('line-long', (t) => {
    const lines = t.split('\n');
    lines.splice(k % (lines.length + 1), 0, longText(kind, n));
    return lines.join('\n');
  })),
  fc.tuple(seedNat, seedNat, longSize).map(([k, kind, n]) => textMutation('line-extend', (t) => {
    const lines = t.split('\n');
    const i = k % lines.length;
    lines[i] = lines[i]!.replace(/\r?$/, (eol) => longText(kind, n) + eol);
    return lines.join('\n');
  })),
);

const MT940_TAGS = ['20', '25', '28C', '60F', '60M', '61', '86', '62F', '62M', '64', '65'] as const;
const fieldRe = (tag: string) => new RegExp(`^:${tag}:(.*)$`, 'gm');

const BALANCE_PARTS = ['mark', 'date', 'currency', 'amount', 'sign'] as const;
const LINE_PARTS = ['date', 'entry-date', 'mark', 'amount', 'rest'] as const;

/** A hostile value for an MT940 field, from its current value with one part replaced where the field has parts. */
function mt940Value(tag: string, current: string, part: number, choice: number): string {
  const amount = () => pickOf(AMOUNTS, choice).replace(/\./g, ',');
  if (/^6[02][FM]$|^6[45]$/.test(tag)) {
    const m = /^([CD])(\d{6})([A-Z]{3})(.*)$/.exec(current);
    if (!m) return pickOf(AMOUNTS, choice);
    const [, mark, date, ccy, amt] = m;
    return pickOf(
      [
        `${pickOf(['X', 'c', '', 'CD', 'RC'], choice)}${date}${ccy}${amt}`,
        `${mark}${pickOf(YYMMDD, choice)}${ccy}${amt}`,
        `${mark}${date}${pickOf(CURRENCIES, choice)}${amt}`,
        `${mark}${date}${ccy}${amount()}`,
        `${mark === 'C' ? 'D' : 'C'}${date}${ccy}${amt}`,
      ],
      part,
    );
  }
  if (tag === '61') {
    const m = /^(\d{6})(\d{4})?([CD]|RC|RD)(\d+,\d*)(.*)$/.exec(current);
    if (!m) return pickOf(AMOUNTS, choice);
    const [, date, entry = '', mark, amt, rest] = m;
    return pickOf(
      [
        `${pickOf(YYMMDD, choice)}${entry}${mark}${amt}${rest}`,
        `${date}${pickOf(MMDD, choice)}${mark}${amt}${rest}`,
        `${date}${entry}${pickOf(['X', 'RC', 'RD', 'EC', 'ED', 'c', '', 'CR'], choice)}${amt}${rest}`,
        `${date}${entry}${mark}${amount()}${rest}`,
        `${date}${entry}${mark}${amt}${pickOf(['', '//', 'N', 'NTRF//', `NTRF${'X'.repeat(2000)}`, '\u0000'], choice)}`,
      ],
      part,
    );
  }
  if (tag === '86') return pickOf(['', '?', '166?', '166?00', '166?20EREF+', '/EREF/', '/CNTP////', '166?20EREF+SVWZ+KREF+', '?31?30'], choice);
  return pickOf(['', '|', 'X'.repeat(3000), '\u00e4\u20ac', 'DE00000000000000000000', '1/2/3'], choice);
}

/** The messages of an MT940 text as [start, end) offsets: from each :20: line to the next one (envelope and separators included). */
function messageSpans(t: string): [number, number][] {
  const starts = [...t.matchAll(/^:20:/gm)].map((m) => m.index);
  return starts.map((at, i) => [at, starts[i + 1] ?? t.length]);
}

const mt940MutationArb: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.tuple(fc.constantFrom('remove', 'duplicate', 'swap'), seedNat, seedNat).map(([op, a, b]) =>
    textMutation(`message-${op}`, (t) => {
      const spans = messageSpans(t);
      if (spans.length === 0) return t;
      const [from, to] = pickOf(spans, a);
      const [from2, to2] = pickOf(spans, b);
      if (op === 'remove') return splice(t, from, to - from, '');
      if (op === 'duplicate') return splice(t, to, 0, t.slice(from, to));
      if (from === from2) return t;
      const [x, y] = from < from2 ? [[from, to], [from2, to2]] : [[from2, to2], [from, to]];
      return t.slice(0, x[0]) + t.slice(y[0]!, y[1]) + t.slice(x[1], y[0]) + t.slice(x[0]!, x[1]) + t.slice(y[1]);
    }),
  ),
  fc.tuple(fc.constantFrom(...MT940_TAGS), seedNat).map(([tag, k]) => textMutation(`field-remove:${tag}`, (t) => {
    const m = nth(t, fieldRe(tag), k);
    return m ? splice(t, m.index, m[0].length + (t[m.index + m[0].length] === '\n' ? 1 : 0), '') : t;
  })),
  fc.tuple(fc.constantFrom(...MT940_TAGS), seedNat).map(([tag, k]) => textMutation(`field-duplicate:${tag}`, (t) => {
    const m = nth(t, fieldRe(tag), k);
    return m ? splice(t, m.index, 0, `${m[0]}\n`) : t;
  })),
  fc.tuple(fc.constantFrom(...MT940_TAGS), seedNat, seedNat).map(([tag, k, choice]) => {
    const part = choice % 5;
    const parts = /^6[02][FM]$|^6[45]$/.test(tag) ? BALANCE_PARTS : tag === '61' ? LINE_PARTS : null;
    return textMutation(`field-value:${tag}${parts ? `:${parts[part]}` : ''}`, (t) => {
      const m = nth(t, fieldRe(tag), k);
      if (!m) return t;
      const cr = m[1]!.endsWith('\r') ? '\r' : '';
      return splice(t, m.index, m[0].length, `:${tag}:${mt940Value(tag, m[1]!.slice(0, m[1]!.length - cr.length), part, choice >> 3)}${cr}`);
    });
  }),
  fc.tuple(fc.constantFrom(...MT940_TAGS), fc.constantFrom('60M', '62M', '60F', '62F', '61', '86', '20', '6', '610', '61a', '61 '), seedNat).map(([from, to, k]) =>
    textMutation(`field-retag:${from}>${to}`, (t) => {
      const m = nth(t, fieldRe(from), k);
      return m ? splice(t, m.index, from.length + 2, `:${to}:`) : t;
    }),
  ),
  fc.tuple(seedNat, longSize, seedNat).map(([k, n, kind]) => textMutation('field-long:86', (t) => {
    const m = nth(t, fieldRe('86'), k);
    return m ? splice(t, m.index, m[0].length, `:86:166${longText(3 + (kind % 3), n)}${m[1]!.endsWith('\r') ? '\r' : ''}`) : t;
  })),
  fc.tuple(seedNat, fc.constantFrom('\x01', '\x03', '\x1a', '{4:', '-}', '{', '}', '{1:F01', '-', ':')).map(([k, token]) =>
    textMutation(`envelope:${JSON.stringify(token)}`, (t) => {
      const starts = [0, ...[...t.matchAll(/\n/g)].map((m) => m.index + 1)];
      return splice(t, pickOf(starts, k), 0, token);
    }),
  ),
  fc.tuple(seedNat).map(([k]) => textMutation('envelope-remove', (t) => {
    const m = nth(t, /\{4:|-\}|\{[1235]:[^}]*\}/g, k);
    return m ? splice(t, m.index, m[0].length, '') : t;
  })),
);

const BENIGN_XML: TextMutation[] = [
  // Names already prefixed are left alone: applied twice, it must still be the same document.
  textMutation('xml-ns-prefix', (t) => t.replace(/<(\/?)([A-Za-z]\w*)(?![\w:])/g, '<$1c:$2').replace('xmlns=', 'xmlns:c='), true),
  textMutation('xml-cdata-amounts', (t) => t.replace(/>(\d+\.\d{2})<\/Amt>/g, '><![CDATA[$1]]></Amt>'), true),
  textMutation('xml-char-refs', (t) => t.replace(/(<Amt[^>]*>)(\d)/g, (_, open: string, d: string) => `${open}&#${d.charCodeAt(0)};`), true),
];
const BENIGN_CSV: TextMutation[] = [textMutation('csv-blank-rows', (t) => t.replace(/\n/g, '\n\n'), true)];

const CAMT_ELEMENTS = ['Ntry', 'Amt', 'CdtDbtInd', 'Sts', 'BookgDt', 'Dt', 'Bal', 'Stmt', 'Acct', 'IBAN', 'FrToDt', 'FrDtTm', 'ToDtTm', 'TxDtls', 'NtryDtls', 'Id', 'Tp', 'Cd', 'AcctSvcrRef', 'GrpHdr', 'BkToCstmrStmt'] as const;
const elementRe = (name: string) => new RegExp(`<${name}(?:\\s[^>]*)?>[\\s\\S]*?</${name}>`, 'g');
const leafRe = (name: string) => new RegExp(`(<${name}(?:\\s[^>]*)?>)([^<]*)(</${name}>)`, 'g');

function camtValue(name: string, choice: number): string {
  switch (name) {
    case 'Amt':
      return pickOf(AMOUNTS, choice);
    case 'Dt':
    case 'FrDtTm':
    case 'ToDtTm':
      return pickOf(ISO_DATES, choice) + (name === 'Dt' ? '' : pickOf(['', 'T00:00:00', 'T23:59:59', 'T12:00:00+01:00'], choice >> 4));
    case 'CdtDbtInd':
      return pickOf(['', 'XXX', 'crdt', 'CRDT ', 'DBIT', 'CRDT', 'BOTH'], choice);
    case 'Sts':
      return pickOf(['PDNG', 'INFO', '', 'book', 'BOOK'], choice);
    case 'Cd':
      return pickOf(['OPBD', 'CLBD', 'PRCD', 'CLAV', '', 'ITBD'], choice);
    default:
      return pickOf(['', '|', 'X'.repeat(3000), '&amp;&lt;', '\u00e4\u20ac', 'NOTPROVIDED'], choice);
  }
}

// Mostly past what a recursive reader's stack takes (about 10,000 frames), one in ten far past it;
// each level costs time, and a hundred levels of 100,000 were most of the parser cases' time.
const nestingDepth = fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 12_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 12_000, max: 100_000 }) });

const BILLION_LAUGHS = `<!DOCTYPE Document [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('')}]>`;
const ENTITY_TRICKS = [
  { name: 'billion-laughs', doctype: BILLION_LAUGHS, reference: '&lol9;' },
  { name: 'xxe-file', doctype: '<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', reference: '&xxe;' },
  { name: 'xxe-http', doctype: '<!DOCTYPE Document [<!ENTITY xxe SYSTEM "http://127.0.0.1:9/x">]>', reference: '&xxe;' },
  { name: 'internal-entity', doctype: '<!DOCTYPE Document [<!ENTITY amt "10.00">]>', reference: '&amt;' },
  { name: 'parameter-entity', doctype: '<!DOCTYPE Document [<!ENTITY % p SYSTEM "http://127.0.0.1:9/evil.dtd"> %p;]>', reference: '' },
  { name: 'external-dtd', doctype: '<!DOCTYPE Document SYSTEM "http://127.0.0.1:9/camt.dtd">', reference: '' },
] as const;

const camtMutationArb: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.tuple(fc.constantFrom(...CAMT_ELEMENTS), seedNat).map(([name, k]) => textMutation(`element-remove:${name}`, (t) => {
    const m = nth(t, elementRe(name), k);
    return m ? splice(t, m.index, m[0].length, '') : t;
  })),
  fc.tuple(fc.constantFrom(...CAMT_ELEMENTS), seedNat).map(([name, k]) => textMutation(`element-duplicate:${name}`, (t) => {
    const m = nth(t, elementRe(name), k);
    return m ? splice(t, m.index, 0, m[0]) : t;
  })),
  fc.tuple(fc.constantFrom('Amt', 'Dt', 'FrDtTm', 'ToDtTm', 'CdtDbtInd', 'Sts', 'Cd', 'Id', 'IBAN', 'AcctSvcrRef', 'EndToEndId'), seedNat, seedNat).map(([name, k, choice]) =>
    textMutation(`element-value:${name}`, (t) => {
      const m = nth(t, leafRe(name), k);
      return m ? splice(t, m.index, m[0].length, `${m[1]}${camtValue(name, choice)}${m[3]}`) : t;
    }),
  ),
  fc.tuple(seedNat, seedNat).map(([k, choice]) => textMutation('attribute-value:Ccy', (t) => {
    const m = nth(t, /Ccy="[^"]*"/g, k);
    return m ? splice(t, m.index, m[0].length, `Ccy="${pickOf(CURRENCIES, choice)}"`) : t;
  })),
  fc.tuple(seedNat, nestingDepth, fc.boolean(), fc.constantFrom('Ntry', 'Stmt', 'Amt')).map(([k, depth, closed, inside]) =>
    textMutation(`nesting:${closed ? 'closed' : 'unclosed'}:${inside}`, (t) => {
      const m = nth(t, new RegExp(`<${inside}(?:\\s[^>]*)?>`, 'g'), k);
      return m ? splice(t, m.index + m[0].length, 0, `${'<X>'.repeat(depth)}${closed ? '</X>'.repeat(depth) : ''}`) : t;
    }),
  ),
  fc.tuple(fc.constantFrom(...ENTITY_TRICKS), fc.constantFrom('Id', 'Amt', 'AcctSvcrRef', 'IBAN'), seedNat).map(([trick, into, k]) =>
    textMutation(`entity:${trick.name}`, (t) => {
      const withDoctype = t.replace(/^(<\?xml[^>]*\?>)?/, (decl) => `${decl}${trick.doctype}`);
      const m = nth(withDoctype, leafRe(into), k);
      return m && trick.reference ? splice(withDoctype, m.index + m[1]!.length, 0, trick.reference) : withDoctype;
    }),
  ),
  fc.tuple(seedNat, longSize, seedNat).map(([k, n, kind]) => textMutation('element-long', (t) => {
    const m = nth(t, /<\/Ntry>/g, k);
    return m ? splice(t, m.index, 0, `<AddtlNtryInf>${longText(kind, n).replace(/[<&]/g, '.')}</AddtlNtryInf>`) : t;
  })),
  fc.constantFrom('BkToCstmrAcctRpt', 'BkToCstmrDbtCdtNtfctn', 'BkToCstmrStmtX', 'bktocstmrstmt').map((root) =>
    textMutation(`root:${root}`, (t) => t.replaceAll('BkToCstmrStmt>', `${root}>`)),
  ),
  // Meaning-preserving XML: the same statement to any conforming reader.
  fc.constantFrom(...BENIGN_XML),
  fc.tuple(seedNat).map(([k]) => textMutation('xml-comment', (t) => {
    const m = nth(t, /<\/?[A-Za-z][^>]*>/g, k);
    return m ? splice(t, m.index + m[0].length, 0, '<!-- c --><?pi x?>') : t;
  }, true)),
);

/** the most columns csvText writes */
const CSV_COLUMNS = 9;
const csvDelimiter = (t: string) => ((t.split('\n').find((l) => /amount|Betrag/.test(l)) ?? '').includes(';') ? ';' : ',');

/**
 * The CSV's header and rows split into cells and mapped by `f` (null: the line as it was). The
 * split ignores quotes: a quoted cell holding the delimiter becomes two, one more way to mangle it.
 */
function mapCells(t: string, f: (cells: string[], row: number, header: boolean, names: string[]) => string[] | null): string {
  const d = csvDelimiter(t);
  let names: string[] | null = null;
  return t
    .split('\n')
    .map((line, row) => {
      const cr = line.endsWith('\r') ? '\r' : '';
      const body = cr ? line.slice(0, -1) : line;
      if (body === '') return line;
      const header = names === null && /amount|Betrag/.test(body);
      if (header) names = body.split(d);
      if (names === null) return line;
      const out = f(body.split(d), row, header, names);
      return out === null ? line : out.join(d) + cr;
    })
    .join('\n');
}

// The column a hostile value of each kind goes into (by its header), else a column at random.
const COLUMN_OF: Record<string, RegExp> = { amount: /amount|betrag/i, date: /date|buchungstag|valuta/i, direction: /credit|soll/i, currency: /currency|waehrung/i };

const csvMutationArb: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: CSV_COLUMNS - 1 })).map(([c]) => textMutation(`column-remove:${c}`, (t) => mapCells(t, (cells) => cells.filter((_, i) => i !== c)))),
  fc.tuple(fc.integer({ min: 0, max: CSV_COLUMNS - 1 })).map(([c]) => textMutation(`column-duplicate:${c}`, (t) => mapCells(t, (cells) => (c < cells.length ? [...cells.slice(0, c + 1), ...cells.slice(c)] : cells)))),
  fc.tuple(fc.integer({ min: 0, max: CSV_COLUMNS - 1 }), seedNat).map(([c, k]) => textMutation(`header-rename:${c}`, (t) =>
    mapCells(t, (cells, _, header) => (header ? cells.map((h, i) => (i === c ? pickOf(['', 'amount', 'date', 'x', 'booking date', 'BETRAG', '"'], k) : h)) : null)),
  )),
  fc.tuple(seedNat, fc.integer({ min: 0, max: CSV_COLUMNS - 1 })).map(([r, c]) => textMutation('cell-remove', (t) => {
    const rows = t.split('\n').length;
    const target = r % rows;
    return mapCells(t, (cells, row, header) => (row === target && !header ? cells.filter((_, i) => i !== c) : null));
  })),
  fc.tuple(seedNat, fc.integer({ min: 0, max: CSV_COLUMNS - 1 }), fc.constantFrom('amount', 'date', 'direction', 'currency', 'quote', 'delimiter', 'newline', 'formula'), seedNat).map(
    ([r, c, what, choice]) =>
      textMutation(`cell-value:${what}`, (t) => {
        const rows = t.split('\n').length;
        const target = r % rows;
        const value = (cell: string) => {
          switch (what) {
            case 'amount':
              return pickOf(AMOUNTS, choice);
            case 'date':
              return pickOf(ISO_DATES, choice);
            case 'direction':
              return pickOf(['', 'X', 'CRDT', 'DBIT', 'crdt', 'HS', 'Haben', '+', '-'], choice);
            case 'currency':
              return pickOf(CURRENCIES, choice);
            case 'quote':
              return pickOf([`"${cell}`, `${cell}"`, `"${cell}"x`, `"${cell}""`, '"'], choice);
            case 'delimiter':
              return `${cell}${pickOf([',', ';', '\t', ',,', ';;'], choice)}`;
            case 'newline':
              return pickOf([`"${cell}\n${cell}"`, `${cell}\r`, `"${cell}\r\n"`], choice);
            default:
              return pickOf(['=HYPERLINK("http://x")', '=1+2', '@SUM(A1)', '+49', '-2+3'], choice);
          }
        };
        return mapCells(t, (cells, row, header, names) => {
          if (row !== target || header) return null;
          const columns = names.flatMap((n, i) => (COLUMN_OF[what]?.test(n) ? [i] : []));
          const column = columns.length > 0 ? pickOf(columns, choice >> 5) : c % cells.length;
          return cells.map((cell, i) => (i === column ? value(cell) : cell));
        });
      }),
  ),
  fc.tuple(seedNat).map(([k]) => textMutation('header-duplicate', (t) => {
    const lines = t.split('\n');
    const header = lines.findIndex((l) => /amount|Betrag/.test(l));
    lines.splice(header + 1 + (k % Math.max(1, lines.length - header)), 0, lines[header]!);
    return lines.join('\n');
  })),
  fc.constantFrom(',', ';', '\t').map((d) => textMutation(`delimiter:${JSON.stringify(d)}`, (t) => t.replace(/[,;]/g, d))),
  fc.constantFrom(...BENIGN_CSV),
);

// ---------------------------------------------------------------------------------------------
// Encodings and byte mutations

interface Encoding {
  name: string;
  benign: boolean;
  encode(text: string): Buffer;
}
const utf16be = (text: string) => {
  const le = Buffer.from(text, 'utf16le');
  for (let i = 0; i + 1 < le.length; i += 2) [le[i], le[i + 1]] = [le[i + 1]!, le[i]!];
  return le;
};
const ENCODINGS: Encoding[] = [
  { name: 'utf8', benign: true, encode: (t) => Buffer.from(t, 'utf8') },
  { name: 'utf8-bom', benign: true, encode: (t) => Buffer.from(`\uFEFF${t}`, 'utf8') },
  { name: 'utf16le-bom', benign: true, encode: (t) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t, 'utf16le')]) },
  { name: 'utf16be-bom', benign: true, encode: (t) => Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(t)]) },
  { name: 'utf16le-no-bom', benign: false, encode: (t) => Buffer.from(t, 'utf16le') },
  { name: 'utf8-double-bom', benign: false, encode: (t) => Buffer.from(`\uFEFF\uFEFF${t}`, 'utf8') },
  { name: 'utf16le-bom-on-utf8', benign: false, encode: (t) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t, 'utf8')]) },
  { name: 'utf8-bom-on-utf16le', benign: false, encode: (t) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(t, 'utf16le')]) },
  { name: 'latin1', benign: true, encode: (t) => Buffer.from(t, 'latin1') },
];
const encodingArb = fc.oneof({ weight: 16, arbitrary: fc.constant(ENCODINGS[0]!) }, { weight: 4, arbitrary: fc.constantFrom(...ENCODINGS.slice(1)) });

const declaredEncodingArb: fc.Arbitrary<TextMutation> = fc
  .constantFrom('ISO-8859-1', 'windows-1252', 'UTF-16', 'utf-8', 'bogus-encoding', 'EBCDIC-CP-US', '', 'x'.repeat(300))
  .map((enc) => textMutation(`xml-encoding:${enc.slice(0, 20)}`, (t) => t.replace(/encoding="[^"]*"/, `encoding="${enc}"`)));

const bytes = (name: string, apply: (b: Buffer) => Buffer, benign = false): ByteMutation => ({ name, benign, apply });
const INTERESTING = [0x00, 0x0a, 0x0d, 0x22, 0x26, 0x2c, 0x2d, 0x3a, 0x3b, 0x3c, 0x3e, 0x7b, 0x7d, 0x3f, 0x2f, 0xff, 0xfe, 0xc3, 0xef, 0x80, 0x1a, 0x01];
const INVALID_UTF8 = [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0xc0, 0xaf], [0x80]];

const byteMutationArb: fc.Arbitrary<ByteMutation> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(seedNat).map(([k]) => bytes('truncate', (b) => b.subarray(0, k % (b.length + 1)))) },
  {
    weight: 6,
    arbitrary: fc.tuple(fc.array(fc.tuple(seedNat, fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 })).map(([flips]) =>
      bytes('flip', (b) => {
        const out = Buffer.from(b);
        for (const [at, x] of flips) if (out.length > 0) out[at % out.length]! ^= x;
        return out;
      }),
    ),
  },
  {
    weight: 5,
    arbitrary: fc.tuple(seedNat, fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.array(fc.constantFrom(...INTERESTING), { minLength: 1, maxLength: 4 }))).map(([at, ins]) =>
      bytes('insert', (b) => {
        const i = at % (b.length + 1);
        return Buffer.concat([b.subarray(0, i), Buffer.from(ins), b.subarray(i)]);
      }),
    ),
  },
  {
    weight: 4,
    arbitrary: fc.tuple(seedNat, fc.integer({ min: 1, max: 400 })).map(([at, n]) =>
      bytes('delete', (b) => {
        const i = at % (b.length + 1);
        return Buffer.concat([b.subarray(0, i), b.subarray(i + n)]);
      }),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(seedNat, fc.integer({ min: 1, max: 400 }), seedNat).map(([from, n, to]) =>
      bytes('duplicate', (b) => {
        const i = from % (b.length + 1);
        const chunk = b.subarray(i, i + n);
        const j = to % (b.length + 1);
        return Buffer.concat([b.subarray(0, j), chunk, b.subarray(j)]);
      }),
    ),
  },
  { weight: 1, arbitrary: fc.tuple(seedNat).map(([at]) => bytes('nul', (b) => {
    const i = at % (b.length + 1);
    return Buffer.concat([b.subarray(0, i), Buffer.from([0]), b.subarray(i)]);
  })) },
  // After 64 KiB of text the format is decided: a NUL there must still be refused, not stored.
  { weight: 1, arbitrary: fc.constant(bytes('nul-late', (b) => Buffer.concat([b, Buffer.from(`${'x'.repeat(70_000)}\u0000\n`)]))) },
  { weight: 2, arbitrary: fc.tuple(seedNat, fc.constantFrom(...INVALID_UTF8)).map(([at, bad]) => bytes('invalid-utf8', (b) => {
    const i = at % (b.length + 1);
    return Buffer.concat([b.subarray(0, i), Buffer.from(bad), b.subarray(i)]);
  })) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom('', ' ', '\n', '\r\n\r\n', '\uFEFF', '\u0000', '<', '<?xml version="1.0"?>', '<Document/>', ':20:', '-', '{1:', 'booking_date,amount', '%PDF-1.4', '\x1f\x8b\x08'),
        fc.string({ maxLength: 300 }),
      )
      .map((s) => bytes('replace-whole', () => Buffer.from(s, 'utf8'))),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 3000 }).map((a) => bytes('random-bytes', () => Buffer.from(a))) },
  { weight: 2, arbitrary: fc.constantFrom(['\r\n', '\n'], ['\n', '\r\n'], ['\r\n', '\r']).map(([from, to]) => bytes(`eol:${JSON.stringify(to)}`, (b) => Buffer.from(b.toString('latin1').replaceAll(from!, to!), 'latin1'))) },
);

// ---------------------------------------------------------------------------------------------

const formatMutations = (format: FuzzFormat): fc.Arbitrary<TextMutation> => {
  switch (format) {
    case 'camt053':
      return fc.oneof({ weight: 12, arbitrary: camtMutationArb }, { weight: 2, arbitrary: lineMutationArb }, { weight: 1, arbitrary: declaredEncodingArb });
    case 'mt940':
      return fc.oneof({ weight: 12, arbitrary: mt940MutationArb }, { weight: 3, arbitrary: lineMutationArb });
    case 'csv':
      return fc.oneof({ weight: 12, arbitrary: csvMutationArb }, { weight: 3, arbitrary: lineMutationArb });
  }
};

// An entity reference in any of the encodings the cases use (saxes knows only the five predefined ones).
const ENTITY_REFERENCES = ['&lol9;', '&xxe;', '&amt;'].flatMap((r) => [Buffer.from(r, 'utf8'), Buffer.from(r, 'utf16le'), utf16be(r)]);

function assemble(s: GenStatement, rendered: Rendered, texts: TextMutation[], encoding: Encoding, byteMutations: ByteMutation[]): StatementFuzzCase {
  let text = rendered.text;
  for (const m of texts) text = m.apply(text);
  let out = encoding.encode(text);
  for (const m of byteMutations) out = m.apply(out);
  const names = [...texts.map((m) => m.name), ...(encoding.name === 'utf8' ? [] : [encoding.name]), ...byteMutations.map((m) => m.name)];
  const benign = [...texts, encoding, ...byteMutations].every((m) => m.benign);
  return {
    label: `${rendered.format}/${rendered.variant}:${names.join('+') || 'valid'}`,
    format: rendered.format,
    bytes: out,
    expected: benign && !rendered.mustRefuse ? truth(s, rendered.format) : null,
    mustRefuse: benign ? (rendered.mustRefuse ?? null) : null,
    entityTrick: texts.some((m) => m.name.startsWith('entity:')) && ENTITY_REFERENCES.some((r) => out.includes(r)),
  };
}

/**
 * One hostile statement file; one case in twenty is only re-dressed (another encoding or an
 * equivalent XML or CSV spelling) and must be read exactly as the statement it came from.
 */
export const statementFuzzCaseArb: fc.Arbitrary<StatementFuzzCase> = statementArb
  .chain((s) => renderArb(s).map((rendered) => ({ s, rendered })))
  .chain(({ s, rendered }) =>
    fc.oneof(
      {
        weight: 19,
        arbitrary: fc
          .record({
            texts: fc.array(formatMutations(rendered.format), { minLength: 0, maxLength: 3 }),
            encoding: encodingArb,
            byteMutations: fc.array(byteMutationArb, { minLength: 0, maxLength: 2 }),
          })
          .filter(({ texts, byteMutations }) => texts.length + byteMutations.length > 0)
          .map(({ texts, encoding, byteMutations }) => assemble(s, rendered, texts, encoding, byteMutations)),
      },
      {
        weight: 1,
        arbitrary: fc
          .record({
            texts: fc.subarray(rendered.format === 'camt053' ? BENIGN_XML : rendered.format === 'csv' ? BENIGN_CSV : []),
            encoding: fc.constantFrom(...ENCODINGS.filter((e) => e.benign)),
          })
          .map(({ texts, encoding }) => assemble(s, rendered, texts, encoding, [])),
      },
    ),
  );
