import { z } from 'zod';

/**
 * A bank's CSV export layout, as data: the built-in profiles (csv-profiles.ts) and a user's profile
 * file (`statement import --profile FILE`, STATEMENT_CSV_PROFILE) have this one shape, documented
 * in docs/how-it-decides.md ("CSV profiles"). Header names are compared canonically (canonicalHeader): case,
 * accents, spaces and punctuation do not matter, and a unit in brackets ('Betrag (EUR)') is the
 * column's currency. A name ending in '*' matches every header starting with it ('VWZ*' for
 * VWZ1..VWZ14). Files without a header row name columns by their 1-based position instead.
 */
// '' names a column whose header cell is empty (a direction column some banks leave unnamed).
const names = z.array(z.union([z.string(), z.number().int().positive()])).min(1);

export const DATE_FORMATS = [
  'YYYY-MM-DD',
  'DD.MM.YYYY',
  'DD.MM.YY',
  'DD/MM/YYYY',
  'DD/MM/YY',
  'MM/DD/YYYY',
  'DD-MM-YYYY',
  'DD-MM-YY',
  'YYYYMMDD',
  'YYYY/MM/DD',
  'D MMM YYYY',
  'MMM D, YYYY',
] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

export const csvProfileSchema = z
  .object({
    /** shown in messages and the import's log line */
    name: z.string().min(1).max(80),
    /** ISO 3166 country of the bank */
    country: z.string().length(2).optional(),
    /** where the bank documents the layout */
    source: z.string().optional(),
    /** false: the file has no header row and columns are named by position */
    header: z.boolean().default(true),
    /** cells per row of a file without a header (its rows are recognised by this count, dates and amounts) */
    cells: z.number().int().positive().optional(),
    delimiter: z.enum([';', ',', '\t', '|']).optional(),
    columns: z
      .object({
        bookingDate: names,
        valueDate: names.optional(),
        /** one signed amount, or unsigned when `direction` is given */
        amount: names.optional(),
        /** split amounts: a debit column and a credit column (either may be written negative) */
        debit: names.optional(),
        credit: names.optional(),
        /**
         * a fee the bank takes from the balance besides the amount (Revolut's 'Fee': the balance
         * moves by Amount minus Fee), stored as a debit line of its own (a negative fee: a credit).
         * Not for a fee the amount already includes (PayPal's 'Net').
         */
        fee: names.optional(),
        /** a column saying credit or debit (values in `credit` and `debit` below) */
        direction: names.optional(),
        currency: names.optional(),
        counterpartyName: names.optional(),
        /** the payer's and the payee's name: the counterparty is the payer of a credit, the payee of a debit */
        payer: names.optional(),
        payee: names.optional(),
        counterpartyIban: names.optional(),
        endToEndId: names.optional(),
        instructionId: names.optional(),
        bankReference: names.optional(),
        /** every column matched is joined, in file order, with a space */
        remittance: names.optional(),
        accountIban: names.optional(),
        /** a booking status column (values in `pending.status`) */
        status: names.optional(),
        /** a record type column: only rows of `bookingRowTypes` are bookings, the others balances and totals */
        rowType: names.optional(),
      })
      .strict(),
    /** further header names that must be present for this profile to be taken (what tells two banks apart) */
    requires: z.array(z.string().min(1)).default([]),
    dateFormats: z.array(z.enum(DATE_FORMATS)).min(1),
    /**
     * The decimal separator of amounts; the other one (and spaces, apostrophes) groups thousands.
     * 'auto': the last of '.' and ',' when both occur, else the one that occurs once (money.ts csvAmountToCents).
     */
    decimal: z.enum([',', '.', 'auto']).default('auto'),
    /** direction column values (compared case-insensitively) */
    credit: z.array(z.string().min(1)).default(['C', 'CR', 'CRDT', 'CREDIT', 'H']),
    debit: z.array(z.string().min(1)).default(['D', 'DR', 'DBIT', 'DEBIT', 'S']),
    bookingRowTypes: z.array(z.string().min(1)).default([]),
    /** lines that are not (yet) bookings: never stored */
    pending: z
      .object({
        /** status column values of pending lines */
        status: z.array(z.string().min(1)).default([]),
        /** booking date cell values of pending lines ('offen', 'Vorgemerkt'); an empty booking date with an amount is always pending */
        bookingDate: z.array(z.string()).default([]),
        /** a row containing one of these starts a block of pending lines ... */
        startsBlock: z.array(z.string().min(1)).default([]),
        /** ... which a row containing one of these (or a new header row) ends */
        endsBlock: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .prefault({}),
    /** rows whose first non-empty cell starts with one of these are totals, balances or footers, not bookings */
    skip: z.array(z.string().min(1)).default([]),
    /**
     * The bank dates its balance and total rows like bookings ('01.03.2026;...;Anfangssaldo;...').
     * Only then is a dated row with a skip word taken for one; otherwise a dated row is a booking
     * whatever its text (a card payment at a TOTAL station).
     */
    datedBalanceRows: z.boolean().default(false),
    /** labels of preamble rows above the header: 'IBAN;DE...' or 'Währung: EUR' */
    metadata: z
      .object({ account: z.array(z.string().min(1)).default([]), currency: z.array(z.string().min(1)).default([]) })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((p, ctx) => {
    const c = p.columns;
    if (!c.amount && !(c.debit && c.credit)) ctx.addIssue({ code: 'custom', path: ['columns'], message: 'needs an amount column, or a debit and a credit column' });
    // Without them every row of the file is a non-booking, and the file imports with no lines at all.
    if (c.rowType && p.bookingRowTypes.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['bookingRowTypes'], message: 'needs the record types of booking rows, since columns.rowType is given (rows of any other type are not stored)' });
    }
    if (!p.header && p.cells === undefined) ctx.addIssue({ code: 'custom', path: ['cells'], message: 'a profile without a header row needs its cell count' });
    const positional = Object.values(c).flat().some((n) => typeof n === 'number');
    const named = Object.values(c).flat().some((n) => typeof n === 'string');
    if (p.header ? positional : named) ctx.addIssue({ code: 'custom', path: ['columns'], message: p.header ? 'columns are header names when header is true' : 'columns are 1-based positions when header is false' });
  });

export type CsvProfile = z.output<typeof csvProfileSchema>;
export type CsvProfileInput = z.input<typeof csvProfileSchema>;
export type CsvField = keyof CsvProfile['columns'];

/** A profile from its JSON text (a user's profile file), or an Error saying what is wrong with it. */
export function parseCsvProfile(json: string, what: string): CsvProfile {
  let value: unknown;
  try {
    // A byte order mark, as Notepad and Excel save UTF-8, is no JSON (csvSettings decodes the file as
    // statements are, which drops it; this is for text from elsewhere).
    value = JSON.parse(json.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new Error(`${what}: not JSON: ${(error as Error).message}`);
  }
  const parsed = csvProfileSchema.safeParse(value);
  if (!parsed.success) {
    throw new Error(`${what}: not a CSV profile: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(profile)'}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/**
 * A header cell as compared: lower case, accents and 'ß' folded (ä -> a, so 'Währung' and 'Wahrung'
 * are one; profiles list 'Waehrung' where banks write it so), a bracketed unit removed, and only
 * letters and digits kept.
 */
export function canonicalHeader(cell: string): string {
  return cell
    .replace(/\([^)]*\)|\[[^\]]*\]/g, '')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/** The currency a header cell's bracketed unit names: 'Betrag (EUR)', 'Amount (€)', 'Paid in (£)'. */
export function headerUnit(cell: string): string | null {
  const unit = /[([]\s*([^)\]]+?)\s*[)\]]/.exec(cell)?.[1];
  return unit ? currencyOfSign(unit) : null;
}

const SIGNS: Record<string, string> = { '€': 'EUR', EURO: 'EUR', '£': 'GBP', 'KČ': 'CZK', FT: 'HUF', 'ZŁ': 'PLN', FR: 'CHF', SFR: 'CHF' };

/** An ISO 4217 code or a sign that names one currency ('$' names several and is none). */
export function currencyOfSign(text: string): string | null {
  const t = text.trim().toUpperCase();
  if (/^[A-Z]{3}$/.test(t)) return t;
  return SIGNS[t] ?? null;
}

const canonicalNames = new Map<string, string>();

/** A profile's header name in canonical form, worked out once per name: every header row is compared with all of them. */
function canonicalName(name: string): string {
  let canonical = canonicalNames.get(name);
  if (canonical === undefined) {
    canonical = canonicalHeader(name);
    canonicalNames.set(name, canonical);
  }
  return canonical;
}

/**
 * A header row as the profiles are compared with it: each cell's canonical form worked out once,
 * an index by canonical form, and each name's matching cells remembered, since the 44 profiles
 * share many names. Compared cell by cell and name by name, a row of thousands of cells took
 * seconds (statement fuzz seed 15 case 3887: 6,498 cells, 5.6 s); this is linear in the row.
 */
export interface HeaderRow {
  readonly cells: readonly string[];
  readonly canonical: readonly string[];
  readonly byCanonical: ReadonlyMap<string, readonly number[]>;
  readonly matches: Map<string, readonly number[]>;
}

export function headerRow(cells: readonly string[]): HeaderRow {
  const canonical = cells.map(canonicalHeader);
  const byCanonical = new Map<string, number[]>();
  canonical.forEach((c, i) => {
    if (c === '') return;
    const at = byCanonical.get(c);
    if (at) at.push(i);
    else byCanonical.set(c, [i]);
  });
  return { cells, canonical, byCanonical, matches: new Map() };
}

/**
 * The cells (in order) a field's name matches: '' an empty cell, 'Name*' any cell whose canonical
 * form starts with the name's, else equal canonical forms (canonicalHeader).
 */
export function cellsMatching(row: HeaderRow, name: string): readonly number[] {
  const known = row.matches.get(name);
  if (known) return known;
  let found: readonly number[];
  if (name === '') {
    found = row.cells.flatMap((cell, i) => (cell.trim() === '' ? [i] : []));
  } else if (name.endsWith('*')) {
    const prefix = canonicalName(name.slice(0, -1));
    found = row.canonical.flatMap((c, i) => (c !== '' && c.startsWith(prefix) ? [i] : []));
  } else {
    found = row.byCanonical.get(canonicalName(name)) ?? [];
  }
  row.matches.set(name, found);
  return found;
}
