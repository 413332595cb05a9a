import { accountId, germanIban } from './account.js';
import { normalizeIban, present } from './reference.js';

/** What :86: says about one booking, each in its own field as the bank sent it. */
export interface Details {
  endToEndId: string | null;
  remittance: string | null;
  counterpartyIban: string | null;
  counterpartyName: string | null;
}

const NONE: Details = { endToEndId: null, remittance: null, counterpartyIban: null, counterpartyName: null };

/**
 * Joins pieces that a fixed width cut apart: after a full piece (the line or subfield was filled to
 * its width, so the cut may fall inside a word) without a separator, else with a space.
 */
function joinCut(pieces: readonly string[], width: number): string {
  let out = '';
  for (let i = 0; i < pieces.length; i += 1) out += i === 0 || pieces[i - 1]!.length >= width ? pieces[i]! : ` ${pieces[i]!}`;
  return out;
}

/** :86: in whichever layout the bank uses: German ?-subfields, Dutch /CODE/ fields, or free text. */
export function mt940Details(value: string | undefined): Details {
  if (!value) return NONE;
  const lines = value.split('\n');
  const joined = lines.join('');
  const german = /^(\d{3})([^A-Za-z0-9 \n])\d{2}/.exec(joined);
  if (german && isSubfielded(joined.slice(3), german[2]!)) return germanDetails(joined.slice(3), german[2]!);
  if (DUTCH_START.test(joined)) return dutchDetails(joined.trim());
  return { ...NONE, remittance: present(joinCut(lines, 65).replace(/\s+/g, ' ')) };
}

const SUBFIELD_CODE = /^(00|10|2\d|3[0-4]|6[0-3])/;

/**
 * Whether a :86: after its three-digit business code is split into subfields by `separator`: '?',
 * the DFÜ-Abkommen's, always; another character only where at least two subfields of known codes
 * follow it. A free text that starts with an amount ('100.00 CHF Auszahlung ...', '250,00 EUR ...')
 * has a '.' or ',' and two digits there too, and split at it its remittance and reference were lost.
 */
function isSubfielded(body: string, separator: string): boolean {
  if (separator === '?') return true;
  return body.split(separator).slice(1).filter((part) => SUBFIELD_CODE.test(part)).length >= 2;
}

// DFÜ-Abkommen Anlage 3 (the German banks' MT940): SEPA keywords inside the purpose subfields.
const KEYWORDS = /(EREF|KREF|MREF|CRED|DEBT|SVWZ|ABWA|ABWE|COAM|OAMT|IBAN|BIC)\+/g;
const REFERENCE_KEYWORDS = new Set(['EREF', 'KREF', 'MREF', 'CRED', 'DEBT', 'IBAN', 'BIC']);
const PURPOSE = ['20', '21', '22', '23', '24', '25', '26', '27', '28', '29', '60', '61', '62', '63'];
const SUBFIELD_WIDTH = 27;

/**
 * German structured :86: (DFÜ-Abkommen): '?NN' subfields (the separator is the character after the
 * three-digit business code, '?' at every bank we know), ?00 posting text, ?20-?29 and ?60-?63 the
 * purpose, ?30 the counterparty's bank code or BIC, ?31 its account or IBAN, ?32/?33 its name. SEPA
 * keywords (EREF+, KREF+, MREF+, CRED+, SVWZ+, ABWA+ ...) may span subfields: each keyword's value
 * runs until the next keyword. A reference keyword's value (EREF+ ...) continues into the next
 * subfield only when its subfield was full, and the end-to-end reference is at most 35 characters
 * (pain.001 Max35Text), so purpose text after it is not mistaken for part of it.
 */
function germanDetails(body: string, separator: string): Details {
  const sub = new Map<string, string[]>();
  const split = body.split(separator);
  for (let i = 1; i < split.length; i += 1) {
    const part = split[i]!;
    const code = part.slice(0, 2);
    // Appended in place: copying the list for each subfield is quadratic (12 s for a :86: of 40,000 subfields).
    const texts = sub.get(code);
    if (texts) texts.push(part.slice(2));
    else sub.set(code, [part.slice(2)]);
  }
  // The purpose as one string, in the order of the purpose codes (each code's subfields in the order
  // written), remembering where each subfield starts and whether the one before was full. Built as
  // pieces and joined once: asking a string grown by += for its last character flattens it each
  // time, quadratic in the number of subfields. Loops, not callbacks: this runs for every :86:.
  const pieces: string[] = [];
  let length = 0;
  let endsWithSpace = false;
  const starts: { at: number; afterFull: boolean }[] = [];
  let before: string | undefined;
  for (const code of PURPOSE) {
    const texts = sub.get(code);
    if (!texts) continue;
    for (const text of texts) {
      const afterFull = before !== undefined && before.length >= SUBFIELD_WIDTH;
      if (before !== undefined && !afterFull && !text.startsWith(' ') && !endsWithSpace) {
        pieces.push(' ');
        length += 1;
        endsWithSpace = true;
      }
      starts.push({ at: length, afterFull });
      pieces.push(text);
      length += text.length;
      if (text !== '') endsWithSpace = text.endsWith(' ');
      before = text;
    }
  }
  const purpose = pieces.join('');
  const marks = [...purpose.matchAll(KEYWORDS)];
  const keywords = new Map<string, string>();
  // Marks and subfield starts both run left to right, so one pass over the starts serves every
  // mark: searching from the first start for each mark is quadratic (16 s for a 360 KB :86:).
  let next = 0;
  for (let i = 0; i < marks.length; i += 1) {
    const m = marks[i]!;
    const keyword = m[1]!;
    const from = m.index + m[0].length;
    let to = marks[i + 1]?.index ?? purpose.length;
    while (next < starts.length && starts[next]!.at <= from) next++;
    if (REFERENCE_KEYWORDS.has(keyword)) {
      for (let k = next; k < starts.length && starts[k]!.at < to; k++) {
        if (!starts[k]!.afterFull) {
          to = starts[k]!.at;
          break;
        }
      }
    }
    let v = purpose.slice(from, to).trim();
    if (keyword === 'EREF') v = v.slice(0, 35);
    keywords.set(keyword, v);
  }
  const name = joinCut([...(sub.get('32') ?? []), ...(sub.get('33') ?? [])], SUBFIELD_WIDTH);
  const bank = sub.get('30')?.join('').trim() ?? '';
  const account = sub.get('31')?.join('').trim() ?? '';
  const counterpartyIban = /^\d{8}$/.test(bank) && /^\d{1,10}$/.test(account) ? germanIban(bank, account) : normalizeIban(accountId(account));
  const untagged = marks.length > 0 ? purpose.slice(0, marks[0]?.index ?? 0).trim() : purpose.trim();
  return {
    endToEndId: present(keywords.get('EREF')),
    remittance: present(keywords.get('SVWZ') ?? untagged),
    counterpartyIban: counterpartyIban ?? normalizeIban(keywords.get('IBAN')),
    counterpartyName: present(name) ?? present(keywords.get('ABWA')),
  };
}

// The field codes of the Dutch structured :86: (ING, ABN AMRO SEPA, Rabobank, SNS/ASN, Triodos, Knab, bunq).
const CODES = 'TRTP|IBAN|BIC|NAME|ADDR|EREF|REMI|MARF|CSID|CNTP|ORDP|BENM|RTRN|PREF|PURP|BUSP|ULTC|ULTD|ULTB|ISDT|CREF|IREF|SVCL|CHGS|EXCH|FX|ID';
const DUTCH_CODES = new RegExp(`/(${CODES})/`, 'g');
const DUTCH_START = new RegExp(`^\\s*/(${CODES})/`);

/**
 * Dutch structured :86: ('/CODE/value/CODE/value/'): EREF the end-to-end reference; CNTP the
 * counterparty as IBAN/BIC/name/city (ING, Rabobank), or IBAN, BIC and NAME as fields of their own
 * (ABN AMRO); REMI the remittance, 'USTD//text' unstructured or 'STRD/CUR/ref' a structured
 * creditor reference, or the text directly. A value runs until the next known code, '/' included
 * ('/EREF/1755481/5570/20250102/REMI/...': the reference is '1755481/5570/20250102'); the one '/'
 * before the next code ends it. CNTP's name is everything between its BIC and its city, so a name
 * with '/' in it stays whole.
 */
function dutchDetails(text: string): Details {
  const fields = new Map<string, string>();
  const marks = [...text.matchAll(DUTCH_CODES)];
  marks.forEach((m, i) => {
    const from = (m.index ?? 0) + m[0].length;
    const to = marks[i + 1]?.index ?? text.length;
    if (!fields.has(m[1]!)) fields.set(m[1]!, text.slice(from, to).trim().replace(/\/$/, '').trim());
  });
  // IBAN/BIC/name/city: the name is what lies between the BIC and the city.
  const cntp = fields.get('CNTP')?.split('/') ?? [];
  const cntpName = cntp.length > 4 ? cntp.slice(2, -1).join('/') : cntp[2];
  const remi = fields.get('REMI') ?? null;
  let remittance = remi;
  if (remi?.startsWith('USTD/')) remittance = remi.replace(/^USTD\/+/, '');
  // STRD/CUR/reference (CUR: a creditor reference, ISO 11649 or a bank's own); the reference whole.
  else if (remi?.startsWith('STRD/')) remittance = remi.replace(/^STRD\/+(?:[A-Z]{3,4}\/+)?/, '');
  return {
    endToEndId: present(fields.get('EREF')),
    remittance: present(remittance),
    counterpartyIban: normalizeIban(present(cntp[0]) ?? present(fields.get('IBAN'))),
    counterpartyName: present(cntpName) ?? present(fields.get('NAME')),
  };
}
