import { describe, expect, it } from 'vitest';

// The page's own module (web/ is plain JavaScript with no build step): what the browser runs is what is tested here.
interface PageFormat {
  centsInText(text: string, currency: string): string;
  moneyCents(cents: string, currency: string): string;
  namedCentsInText(text: string, currency: string): string;
}
const { centsInText, moneyCents, namedCentsInText } = (await import(new URL('../../web/format.js', import.meta.url).href)) as PageFormat;

describe('the page shows money, not cents', () => {
  it("writes payout_deduction_mismatch's name=cents checks as money, each check apart", () => {
    const eur = (cents: string) => moneyCents(cents, 'EUR');
    expect(namedCentsInText('discount=14057;fee=30', 'EUR')).toBe(`discount ${eur('14057')}; fee ${eur('30')}`);
    const sentence = 'Payout 0b9c6f3e-1111-4222-8333-444455556666 (SEPA reference PO2026), report row 3 (invoice INV-7): expected vat=-53, reported vat=0.';
    const shown = namedCentsInText(sentence, 'EUR');
    expect(shown).toBe(`Payout 0b9c6f3e-1111-4222-8333-444455556666 (SEPA reference PO2026), report row 3 (invoice INV-7): expected vat ${eur('-53')}, reported vat ${eur('0')}.`);
    expect(shown).not.toMatch(/=\d/);
  });

  it("writes 'N cents' in a sentence as money, and leaves text without amounts alone", () => {
    expect(centsInText('a credit of 123456 cents', 'EUR')).toBe(`a credit of ${moneyCents('123456', 'EUR')}`);
    expect(namedCentsInText('no checks here', 'EUR')).toBe('no checks here');
  });
});

describe('a currency Intl does not take', () => {
  // A ledger may hold one (a CAMT.053 imported before its Ccy was checked: 'EURO'); drawing it threw
  // a RangeError, which blanked the whole Discrepancies view and made the Upload view say a stored
  // statement was "not imported: nothing was stored".
  it('is written beside the number instead of throwing', () => {
    expect(moneyCents('12345', 'EURO')).toMatch(/^123[.,]45 EURO$/);
    expect(centsInText('a credit of 500 cents', 'EURO')).toMatch(/^a credit of 5[.,]00 EURO$/);
    expect(moneyCents('12345', 'GBP')).toMatch(/£/);
  });
});
