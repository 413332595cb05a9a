import { describe, expect, it } from 'vitest';
import { canonicalNumber, differingMembers } from '../../src/reconcile/rules/retry-body.js';

const b = (text: string) => Buffer.from(text);

describe('differingMembers: is a delivery with an applied event key a retry of it?', () => {
  it('same bytes, and the same JSON written otherwise, are the same event', () => {
    const applied = b('{"topic":"order/confirmed","order_uuid":"o1","amount_cents":"100","total":12.5,"lines":[1,2]}');
    expect(differingMembers(applied, applied)).toEqual([]);
    // Whitespace, member order, 12.50 for 12.5, an escaped character, a byte order mark.
    const reformatted = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b('{ "lines": [1, 2], "total": 12.50, "amount_cents": "1\\u0030\\u0030",\n "order_uuid": "o1", "topic": "order/confirmed" }')]);
    expect(differingMembers(applied, reformatted)).toEqual([]);
  });

  it('names each top-level member whose value differs, is missing or is added, sorted', () => {
    const applied = b('{"topic":"order/confirmed","order_uuid":"o1","state":"confirmed","amount":{"cents":"100"},"lines":[1,2]}');
    const other = b('{"topic":"order/confirmed","order_uuid":"o1","state":"canceled","amount":{"cents":"101"},"lines":[2,1],"note":"x"}');
    expect(differingMembers(applied, other)).toEqual(['amount', 'lines', 'note', 'state']);
    expect(differingMembers(other, b('{"topic":"order/confirmed","order_uuid":"o1","state":"canceled","amount":{"cents":"101"},"lines":[2,1]}'))).toEqual(['note']);
    // A nested member dropped, or null against absent.
    expect(differingMembers(b('{"a":{"x":1,"y":null}}'), b('{"a":{"x":1}}'))).toEqual(['a']);
    expect(differingMembers(b('{"a":null}'), b('{}'))).toEqual(['a']);
    // A number against the same digits as a string is another value.
    expect(differingMembers(b('{"a":100}'), b('{"a":"100"}'))).toEqual(['a']);
  });

  it('a body that is not a JSON object differs as a whole', () => {
    expect(differingMembers(b('{"a":1}'), b('[1]'))).toEqual(['(body)']);
    expect(differingMembers(b('{"a":1}'), b('{"a":'))).toEqual(['(body)']);
  });
});

describe('numbers compared by their digits', () => {
  it('tells amounts apart beyond 2^53, and one number in several spellings apart from none', () => {
    const b = (text: string) => Buffer.from(text);
    expect(differingMembers(b('{"gross_amount_cents":9007199254740993}'), b('{"gross_amount_cents":9007199254740992}'))).toEqual(['gross_amount_cents']);
    expect(differingMembers(b('{"a":{"cents":12345678901234567890}}'), b('{"a":{"cents":12345678901234567891}}'))).toEqual(['a']);
    expect(differingMembers(b('{"a":100,"b":1.5,"c":-0}'), b('{"a":1e2,"b":15E-1,"c":0}'))).toEqual([]);
  });

  it('writes a literal as plain decimal digits', () => {
    expect(['-1.50e2', '0.10', '-0', '0e5', '1E-3', '123.4500e1', '5', '1e-401'].map(canonicalNumber)).toEqual(['-150', '0.1', '0', '0', '0.001', '1234.5', '5', '1e-401']);
  });
});
