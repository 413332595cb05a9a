import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface PageFormat {
  centsInText(text: string, currency: string): string;
  namedCentsInText(text: string, currency: string): string;
}
const { centsInText, namedCentsInText } = (await import(new URL('../../web/format.js', import.meta.url).href)) as PageFormat;
const web = (f: string) => readFileSync(new URL(`../../web/${f}`, import.meta.url), 'utf8');

describe('the page against its promises (docs/page.md)', () => {
  it("shows payout_deduction_mismatch's MDR check as a rate, not as cents", () => {
    expect(namedCentsInText('discount=320;mdr=3.2', 'EUR')).toBe('discount €3.20; mdr 3.2 %');
  });

  it('the sign-in form cannot put the token in the URL (submitted before app.js attached, or with JS failed)', () => {
    const html = web('index.html');
    const form = /<form id="sign-in-form"[^>]*>/.exec(html)![0];
    const input = /<input id="token"[^>]*>/.exec(html)![0];
    // A form without method is GET: a named input would put /?token=<secret> in the address bar and history.
    expect(/method="post"/i.test(form) || !/\bname=/.test(input)).toBe(true);
  });

  it('a 19-digit (64-bit) cents value in a payout_deduction_mismatch check is shown as money', () => {
    expect(namedCentsInText('discount=1000000000000000000;fee=30', 'EUR')).not.toMatch(/=\d/);
  });

  it("a hyphenated reference before 'cents' is not turned into a negative amount", () => {
    expect(centsInText('Booked against INV-2024 cents rounding', 'EUR')).toContain('INV-2024');
  });

  it('payout downloads report failures (503/413/401) like the other views do', () => {
    expect(web('payouts.js')).toMatch(/Download failed/);
  });

  it('discrepancy filter and Load more failures (400 bad filter, 503) are shown', () => {
    const src = web('discrepancies.js');
    expect(src).toMatch(/loadDiscrepancies\(\)\.catch|loadMore\(\)\.catch/);
  });
});
