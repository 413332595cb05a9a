/**
 * The statement's own account, as one key whichever format named it. CAMT carries the IBAN; MT940
 * :25: carries what the bank chose: the IBAN, the IBAN followed by the currency (ING:
 * 'NL68INGB0000012345EUR'), or the German 'BLZ/account number' ('50010517/5407324931'), from which
 * the IBAN follows by the standard German rule (DE, check digits, 8-digit bank code, 10-digit
 * account number zero-padded; ISO 13616 mod 97). So the CAMT and MT940 exports of one account
 * name the same account. Anything else (a bare account number) is kept as written, without spaces.
 */
export function accountId(value: string | null | undefined): string | null {
  const v = value?.replace(/\s+/g, '').replace(/^\//, '').toUpperCase();
  if (!v) return null;
  if (isIban(v)) return v;
  const withCurrency = /^([A-Z]{2}\d{2}[A-Z0-9]{11,30}?)([A-Z]{3})$/.exec(v);
  if (withCurrency && isIban(withCurrency[1]!)) return withCurrency[1]!;
  const blz = /^(\d{8})\/(\d{1,10})(?:[A-Z]{3})?$/.exec(v);
  if (blz) return germanIban(blz[1]!, blz[2]!);
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

/** The IBAN of a German bank code and account number (check digits 98 - (BBAN + 'DE00') mod 97). */
export function germanIban(bankCode: string, account: string): string {
  const bban = bankCode + account.padStart(10, '0');
  const check = 98 - mod97(`${bban}DE00`);
  return `DE${String(check).padStart(2, '0')}${bban}`;
}
