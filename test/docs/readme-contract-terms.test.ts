import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseContractTerms } from '../../src/payout-reports/contract-terms.js';

/**
 * CONTRACT.md, "Settings": CONTRACT_TERMS is "a file path or inline JSON; the README documents the
 * shape with an example". The README's example must be terms the daemon takes as they are written.
 */
const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

describe('the README and CONTRACT_TERMS', () => {
  it('shows an example of the terms next to the setting, which the daemon reads as written', () => {
    const at = README.indexOf('`CONTRACT_TERMS`');
    expect(at).toBeGreaterThan(-1);
    const example = /```json\n([\s\S]*?)```/.exec(README.slice(at));
    expect(example).not.toBeNull();
    const terms = parseContractTerms(example![1]!.trim());
    expect(terms.fixedFeeCents).toBe(30n);
    expect(terms.mdr).toHaveLength(2);
  });
});
