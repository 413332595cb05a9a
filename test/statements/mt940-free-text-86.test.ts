import { describe, expect, it } from 'vitest';
import { parseStatement } from '../../src/statements/detect.js';

// A free-text :86: (Swiss, Nordic, UK banks) that happens to start with three digits, a separator and
// two digits — an amount — is not the German '?NN' subfield layout.
const statement = (info: string) => `:20:STMT260105
:25:CH9300762011623852957
:28C:5/1
:60F:C260104CHF1000,00
:61:260105C100,00NTRFNONREF//123456
:86:${info}
:62F:C260105CHF1100,00
-`;

describe('MT940 free-text :86: starting with an amount', () => {
  it.each(['100.00 CHF Auszahlung PO20260105123456', '250,00 EUR Auszahlung PO20260105123456'])('keeps the remittance and the payout reference of %j', (info) => {
    const l = parseStatement(Buffer.from(statement(info))).lines[0]!;
    // Not German subfields split at the '.' or ',' (which lost both).
    expect([l.remittance, l.sepaReference]).toEqual([info, 'PO20260105123456']);
  });
});
