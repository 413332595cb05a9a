/**
 * The statement's own account, as one key whichever format named it. CAMT carries the IBAN; MT940
 * :25: carries what the bank chose, and each form that determines the IBAN becomes it:
 *  - the IBAN, with spaces or followed by the currency (ING: 'NL68INGB0000012345EUR');
 *  - the German 'BLZ/account number' ('50010517/5407324931', optionally with the currency): the
 *    IBAN follows by the German rule (DE, check digits, 8-digit bank code, 10-digit account
 *    number zero-padded; check digits by ISO 13616 mod 97);
 *  - a Dutch bank's account number, bare (ABN AMRO: '517852257', the bank's BIC in the file's
 *    header) or after the bank's BIC ('ABNANL2A/517852257'): NL, check digits, the bank code (the
 *    BIC's first four letters) and the account number padded to ten digits, the Dutch rule.
 * Anything else (a bare account number of a bank outside the Netherlands, whose IBAN needs a bank
 * code the file does not give; national forms we do not know) is kept as written, without spaces,
 * upper case: it then matches only statements that write it the same way.
 */
export function accountId(value: string | null | undefined, bankBic?: string | null): string | null {
  const v = value?.replace(/\s+/g, '').replace(/^\//, '').toUpperCase();
  if (!v) return null;
  if (isIban(v)) return v;
  const withCurrency = /^([A-Z]{2}\d{2}[A-Z0-9]{11,30}?)([A-Z]{3})$/.exec(v);
  if (withCurrency && isIban(withCurrency[1]!)) return withCurrency[1]!;
  const blz = /^(\d{8})\/(\d{1,10})(?:[A-Z]{3})?$/.exec(v);
  if (blz) return germanIban(blz[1]!, blz[2]!);
  const dutch = /^(?:([A-Z]{4}NL[A-Z0-9]{2}(?:[A-Z0-9]{3})?)\/)?(\d{1,10})(?:EUR)?$/.exec(v);
  const bic = dutch?.[1] ?? bankBic;
  if (dutch && bic && /^[A-Z]{4}NL/.test(bic)) return ibanOf('NL', bic.slice(0, 4) + dutch[2]!.padStart(10, '0'));
  return v;
}

/**
 * ISO 13616: the IBAN with its first four characters moved to the end, letters as 10..35, is 1 mod
 * 97, and it is as long as its country's IBANs are (SWIFT's IBAN registry; a country not listed
 * here: 15 to 34 characters). Without the length, one string in 97 passes the check with anything
 * appended: 'DE16760260000000000011EUR', an IBAN and its currency as a :25: field writes them,
 * passed as an IBAN of its own (found by test/statements/property.test.ts).
 */
export function isIban(v: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(v)) return false;
  const length = IBAN_LENGTHS[v.slice(0, 2)];
  if (length !== undefined && v.length !== length) return false;
  return mod97(v.slice(4) + v.slice(0, 4)) === 1;
}

/** IBAN length per country, from SWIFT's IBAN registry. */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28,
  CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18,
  GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32,
  LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15,
  PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SC: 31, SE: 24, SI: 19, SK: 24, SM: 27, ST: 25,
  SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
};

function mod97(text: string): number {
  let rest = 0;
  for (const c of text) {
    const n = c >= 'A' && c <= 'Z' ? c.charCodeAt(0) - 55 : Number(c);
    rest = n >= 10 ? (rest * 100 + n) % 97 : (rest * 10 + n) % 97;
  }
  return rest;
}

/** The IBAN of a German bank code and account number. */
export function germanIban(bankCode: string, account: string): string {
  return ibanOf('DE', bankCode + account.padStart(10, '0'));
}

/** Check digits 98 - (BBAN + country + '00') mod 97 (ISO 13616). */
function ibanOf(country: string, bban: string): string {
  const check = 98 - mod97(`${bban}${country}00`);
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}
