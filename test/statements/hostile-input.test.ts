import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

/** Regressions found by the statement fuzz test (statement-fuzz.test.ts), each on its smallest file. */

const mt940 = (fields: string[]) => [':20:X', ':25:DE44500105175407324931', ':28C:1/1', ...fields, '-', ''].join('\r\n');

describe('MT940 :86: of hostile size', () => {
  // A SWIFT :86: holds at most 6 lines of 65 characters; a file may still carry megabytes there.
  it.each([
    ['purpose subfields', `166?00GUTSCHRIFT${'?20ab'.repeat(200_000)}`],
    ['reference keywords', `166?20EREF+E2E-1${'?20EREF+x'.repeat(100_000)}`],
  ])('reads 200,000 %s in one :86: in linear time', (_, details) => {
    const text = mt940([':60F:C260302EUR0,00', ':61:2603020302C1,00NTRFNONREF', `:86:${details}`, ':62F:C260302EUR1,00']);
    const started = performance.now();
    const p = parseStatement(text);
    // Quadratic, 40,000 subfields took 12 s; linear, 200,000 take well under a second.
    expect(performance.now() - started).toBeLessThan(3000);
    expect(p.lines).toHaveLength(1);
    expect(p.lines[0]!.amountCents).toBe(100n);
  });
});
