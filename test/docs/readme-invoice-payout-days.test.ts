import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_INVOICE_PAYOUT_DAYS } from '../../src/config/schema.js';

/**
 * CONTRACT.md, "Settings": INVOICE_PAYOUT_DAYS' default is "from the provider's documented payout
 * timing (the README states it)". The README names the setting once (the demo's tour) but states
 * neither its default nor the timing it comes from; only docs/settings.md does.
 */
const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

describe('the README and INVOICE_PAYOUT_DAYS', () => {
  it('states INVOICE_PAYOUT_DAYS\' default (in days) where it names the setting', () => {
    const near = [...README.matchAll(/INVOICE_PAYOUT_DAYS/g)].map((m) => README.slice(m.index, m.index + 300));
    expect(near.some((text) => new RegExp(`\\b${DEFAULT_INVOICE_PAYOUT_DAYS}\\b[^\\n]*day`).test(text))).toBe(true);
  });
});
