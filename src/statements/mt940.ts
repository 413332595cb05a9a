import { decimalToCents } from './money.js';
import { normalizeIban, present, sepaReferenceOf } from './reference.js';
import { StatementFormatError, type ParsedStatement, type StatementLine } from './types.js';

interface Field {
  tag: string;
  value: string;
}

/** Splits the text into :TAG: fields; a line that starts no tag continues the previous field. SWIFT block wrappers are dropped. */
function fields(text: string): Field[] {
  const out: Field[] = [];
  for (const raw of text.replace(/\r\n?/g, '\n').split('\n')) {
    const line = raw.replace(/^\{[1-3]:[^}]*\}/g, '').replace(/^\{4:/, '').replace(/^-\}$/, '');
    const m = /^:(\d{2}[A-Z]?):(.*)$/.exec(line);
    if (m) out.push({ tag: m[1] ?? '', value: m[2] ?? '' });
    else if (line !== '-' && line !== '' && out.length > 0) out[out.length - 1]!.value += `\n${line}`;
  }
  return out;
}

function isoFromYymmdd(yymmdd: string): string {
  const yy = Number(yymmdd.slice(0, 2));
  // SWIFT years have two digits; 80-99 are the 1900s (no bank statement predates 1980).
  return `${yy >= 80 ? 19 : 20}${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`;
}

/** The booking (entry) date MMDD of :61: takes the value date's year, crossing New Year either way. */
function bookingDateFrom(valueDate: string, mmdd: string | undefined): string {
  if (!mmdd) return valueDate;
  let year = Number(valueDate.slice(0, 4));
  const valueMonth = Number(valueDate.slice(5, 7));
  const month = Number(mmdd.slice(0, 2));
  if (month === 12 && valueMonth === 1) year -= 1;
  if (month === 1 && valueMonth === 12) year += 1;
  return `${year}-${mmdd.slice(0, 2)}-${mmdd.slice(2, 4)}`;
}

const BALANCE = /^([CD])(\d{6})([A-Z]{3})(\d+,\d*)$/;
// :61: value date, optional entry date, mark (RC/RD reverse), optional funds code, amount with a
// decimal comma, transaction type (N + 3), customer reference, optional // bank reference.
const STATEMENT_LINE = /^(\d{6})(\d{4})?(RC|RD|C|D)([A-Z])?(\d+,\d{0,2})([NFS][A-Z0-9]{3})(.*)$/;
const SEPA_KEYWORDS = /(EREF|KREF|MREF|CRED|DEBT|SVWZ|ABWA|ABWE|COAM|OAMT)\+/g;

interface Details {
  endToEndId: string | null;
  remittance: string | null;
  counterpartyIban: string | null;
  counterpartyName: string | null;
}

/**
 * :86: as German banks structure it (DFÜ-Abkommen): '?NN' subfields, ?20-?29 and ?60-?63 the
 * purpose (SEPA keywords EREF+, SVWZ+ ... may span subfields, so they are joined first), ?31 the
 * counterparty IBAN, ?32/?33 its name. Continuation lines are joined without a separator because
 * the 65-character line breaks fall anywhere, even inside a word. Unstructured :86: is remittance.
 */
function details(value: string | undefined): Details {
  const joined = (value ?? '').replace(/\n/g, '');
  if (!/^\d{3}\?/.test(joined)) return { endToEndId: null, remittance: present(joined), counterpartyIban: null, counterpartyName: null };
  const sub = new Map<string, string>();
  for (const m of joined.slice(3).matchAll(/\?(\d{2})([^?]*)/g)) sub.set(m[1] ?? '', (sub.get(m[1] ?? '') ?? '') + (m[2] ?? ''));
  const purposeCodes = ['20', '21', '22', '23', '24', '25', '26', '27', '28', '29', '60', '61', '62', '63'];
  const purpose = purposeCodes.map((c) => sub.get(c) ?? '').join('');
  const keywords = new Map<string, string>();
  const marks = [...purpose.matchAll(SEPA_KEYWORDS)];
  marks.forEach((m, i) => {
    const start = (m.index ?? 0) + m[0].length;
    const end = marks[i + 1]?.index ?? purpose.length;
    keywords.set(m[1] ?? '', purpose.slice(start, end).trim());
  });
  const name = [sub.get('32'), sub.get('33')].filter(Boolean).join('');
  return {
    endToEndId: present(keywords.get('EREF')),
    remittance: present(marks.length > 0 ? (keywords.get('SVWZ') ?? null) : purpose),
    counterpartyIban: normalizeIban(sub.get('31')),
    counterpartyName: present(name),
  };
}

/** SWIFT MT940 (customer statement): one line per :61:, with the :86: that follows it. */
export function parseMt940(text: string): ParsedStatement {
  const all = fields(text);
  if (!all.some((f) => f.tag === '61') && !all.some((f) => f.tag.startsWith('60'))) throw new StatementFormatError('MT940 without :60: or :61: fields');
  const lines: StatementLine[] = [];
  let account: string | null = null;
  let firstAccount: string | null = null;
  let currency = 'EUR';
  let periodFrom: string | null = null;
  let periodTo: string | null = null;
  for (let i = 0; i < all.length; i++) {
    const f = all[i]!;
    if (f.tag === '25') {
      account = normalizeIban(f.value);
      firstAccount ??= account;
    } else if (f.tag === '60F' || f.tag === '60M') {
      const m = BALANCE.exec(f.value.trim());
      if (!m) throw new StatementFormatError(`MT940 :${f.tag}: not a balance: '${f.value}'`);
      currency = m[3] ?? currency;
      const from = `${isoFromYymmdd(m[2] ?? '')}T00:00:00.000Z`;
      if (!periodFrom || from < periodFrom) periodFrom = from;
    } else if (f.tag === '62F' || f.tag === '62M') {
      const m = BALANCE.exec(f.value.trim());
      if (!m) throw new StatementFormatError(`MT940 :${f.tag}: not a balance: '${f.value}'`);
      // A closing balance is the end-of-day booked balance of its date: the statement covers that whole day.
      const day = new Date(`${isoFromYymmdd(m[2] ?? '')}T00:00:00Z`);
      day.setUTCDate(day.getUTCDate() + 1);
      if (!periodTo || day.toISOString() > periodTo) periodTo = day.toISOString();
    } else if (f.tag === '61') {
      const first = f.value.split('\n')[0] ?? '';
      const m = STATEMENT_LINE.exec(first);
      if (!m) throw new StatementFormatError(`MT940 :61: not understood: '${first}'`);
      const refs = m[7] ?? '';
      const cut = refs.indexOf('//');
      const valueDate = isoFromYymmdd(m[1] ?? '');
      const mark = m[3] ?? '';
      const next = all[i + 1];
      const d = details(next?.tag === '86' ? next.value : undefined);
      const customerRef = present(cut >= 0 ? refs.slice(0, cut) : refs);
      const bankReference = present(cut >= 0 ? refs.slice(cut + 2) : null);
      const endToEndId = d.endToEndId;
      lines.push({
        accountIban: account,
        bookingDate: bookingDateFrom(valueDate, m[2]),
        valueDate,
        amountCents: decimalToCents(m[5] ?? ''),
        currency,
        // RC reverses a credit (money leaves), RD reverses a debit (money comes back).
        direction: mark === 'C' || mark === 'RD' ? 'credit' : 'debit',
        counterpartyIban: d.counterpartyIban,
        counterpartyName: d.counterpartyName,
        endToEndId,
        instructionId: null,
        bankReference,
        remittance: d.remittance,
        sepaReference: sepaReferenceOf({ endToEndId, instructionId: customerRef === 'NONREF' ? null : customerRef, remittance: d.remittance }),
      });
    }
  }
  return { format: 'mt940', accountIban: firstAccount, periodFrom, periodTo, lines };
}
