/**
 * The statement's own account, as one key whichever format named it. CAMT carries the IBAN; MT940
 * :25: carries what the bank chose: the IBAN, the IBAN followed by the currency (ING:
 * 'NL68INGB0000012345EUR'), or the German 'BLZ/account number' ('50010517/5407324931'), from which
 * the IBAN follows by the standard German rule (DE, check digits, 8-digit bank code, 10-digit
 * account number zero-padded; ISO 13616 mod 97), or a Dutch bank's bare account number with the
 * bank's BIC from the file's header. So the CAMT and MT940 exports of one account name the same
 * account. Anything else is kept as written, without spaces.
 */
export function accountId(value: string | null | undefined, bankBic?: string | null): string | null {
  const v = value?.replace(/\s+/g, '').replace(/^\//, '').toUpperCase();
  if (!v) return null;
  if (isIban(v)) return v;
  const withCurrency = /^([A-Z]{2}\d{2}[A-Z0-9]{11,30}?)([A-Z]{3})$/.exec(v);
  if (withCurrency && isIban(withCurrency[1]!)) return withCurrency[1]!;
  const blz = /^(\d{8})\/(\d{1,10})(?:[A-Z]{3})?$/.exec(v);
  if (blz) return germanIban(blz[1]!, blz[2]!);
  // A Dutch bank's bare account number (ABN AMRO :25:): the IBAN is NL, check digits, the bank
  // code (the BIC's first four letters) and the account number padded to ten digits.
  if (bankBic && /^[A-Z]{4}NL/.test(bankBic) && /^\d{1,10}$/.test(v)) return ibanOf('NL', bankBic.slice(0, 4) + v.padStart(10, '0'));
  return v;
}

/** ISO 13616: the IBAN with its first four characters moved to the end, letters as 10..35, is 1 mod 97. */
export function isIban(v: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(v)) return false;
  return mod97(v.slice(4) + v.slice(0, 4)) === 1;
}

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
