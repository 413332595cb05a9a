import { describe, expect, it } from 'vitest';
import { classifyDelivery, type Classification } from '../../src/webhooks/classify.js';
import { numberLiterals, pathKey } from '../../src/provider/number-literals.js';
import { isStorableText, jsonbProblem, MAX_JSONB_DEPTH, storableText } from '../../src/webhooks/storable.js';
import { samplePayload } from '../fixtures/spec-payloads.js';

/**
 * Values JSON allows and the spec does not: each is either parsed exactly into a value its column
 * holds, or the delivery is invalid_shape with the field named. Bodies are written as raw text where
 * the form of a number matters (JSON.stringify would normalise 1e3 to 1000).
 */
const classify = (raw: string): Classification => classifyDelivery(Buffer.from(raw));
const withField = (topic: string, field: string, rawValue: string): string => {
  const body = JSON.stringify({ ...samplePayload(topic), [field]: '__VALUE__' });
  return body.replace('"__VALUE__"', rawValue);
};
const nested = (topic: string, parent: string, field: string, rawValue: string): string => {
  const sample = samplePayload(topic);
  const body = JSON.stringify({ ...sample, [parent]: { ...(sample[parent] as object), [field]: '__VALUE__' } });
  return body.replace('"__VALUE__"', rawValue);
};
const typed = (c: Classification, column: string): unknown => (c.ok && c.status === 'parsed' ? c.event.typed.values[column] : 'not parsed');
const refusal = (c: Classification): string => (c.ok && c.status !== 'parsed' ? `${c.status}/${c.reason}: ${c.error}` : `not refused (${c.ok ? c.status : c.reason})`);

describe('amounts: integer strings and integer numbers, exactly', () => {
  it.each([
    ['payout/complete', 'amount_cents'],
    ['payout/cancelled', 'amount_cents'],
    ['invoice/payment', 'amount_cents'],
    ['invoice/complete', 'gross_amount_cents'],
    ['factoring/approved', 'invoice_amount_cents'],
  ])('%s %s: a JSON number is read from its digits, like the string', (topic, field) => {
    const column = field === 'invoice_amount_cents' ? 'invoice_amount_cents' : field;
    expect(typed(classify(withField(topic, field, '1180450')), column)).toBe('1180450');
    expect(typed(classify(withField(topic, field, '"1180450"')), column)).toBe('1180450');
    expect(typed(classify(withField(topic, field, '-25')), column)).toBe('-25');
    // Beyond 2^53 a double would have rounded it to ...992; the digits are kept.
    expect(typed(classify(withField(topic, field, '9007199254740993')), column)).toBe('9007199254740993');
    expect(typed(classify(withField(topic, field, '9223372036854775807')), column)).toBe('9223372036854775807');
  });

  it.each(['12.5', '1e3', '1E3', '1000.0', '12.0000000000000001', '9223372036854775808', '-9223372036854775809', '1e400'])(
    'refuses the number %s in payout amount_cents, naming the field',
    (literal) => {
      const c = classify(withField('payout/complete', 'amount_cents', literal));
      expect(c).toMatchObject({ ok: true, status: 'invalid_shape', reason: 'invalid_field' });
      expect(refusal(c)).toContain('amount_cents');
    },
  );

  it.each(['"12.5"', '"1e3"', '""', '" 12"', '"012"', '"9223372036854775808"', '"+5"', 'true', '[]', '{}'])('refuses %s in payout amount_cents', (raw) => {
    expect(refusal(classify(withField('payout/complete', 'amount_cents', raw)))).toMatch(/^invalid_shape\/invalid_field: amount_cents: /);
  });

  it('judges a repeated member by its last value, as JSON.parse does', () => {
    const body = withField('payout/complete', 'amount_cents', '100').replace('"topic"', '"amount_cents":1e3,"topic"');
    expect(typed(classify(body), 'amount_cents')).toBe('100');
    const reversed = withField('payout/complete', 'amount_cents', '1e3').replace('"topic"', '"amount_cents":100,"topic"');
    expect(refusal(classify(reversed))).toContain('amount_cents');
  });

  it('finds a member whose name is written with escapes', () => {
    const body = withField('payout/complete', 'amount_cents', '7').replace('"amount_cents"', '"amount\\u005fcents"');
    expect(typed(classify(body), 'amount_cents')).toBe('7');
    const bad = withField('payout/complete', 'amount_cents', '7.5').replace('"amount_cents"', '"amount\\u005fcents"');
    expect(refusal(classify(bad))).toContain('amount_cents');
  });
});

describe('buyer/limit_updated amounts always reach their check', () => {
  it.each(['"12.5"', '"1e3"', '""', '"99999999999999999999"', '12.5', '1e3', '99999999999999999999'])('purchasing_limit_cents %s is invalid_shape with the field named', (raw) => {
    const c = classify(nested('buyer/limit_updated', 'buyer', 'purchasing_limit_cents', raw));
    expect(refusal(c)).toMatch(/^invalid_shape\/invalid_field: buyer\.purchasing_limit_cents: /);
  });

  it('reads limit amounts sent as numbers exactly', () => {
    const c = classify(nested('buyer/limit_updated', 'buyer', 'balance_cents', '1200001'));
    expect(typed(c, 'balance_cents')).toBe('1200001');
    expect(typed(c, 'purchasing_limit_cents')).toBe('5000000');
  });

  it('checks the amounts of a buyer/accepted that carries them too', () => {
    expect(refusal(classify(nested('buyer/accepted', 'buyer', 'balance_cents', '"1.5"')))).toContain('buyer.balance_cents');
  });
});

describe('day counts fit their int4 columns', () => {
  it.each([
    ['order/confirmed', 'net_term', 'net_term_days'],
    ['billing_configuration/created', 'due_in_days', 'due_in_days'],
    ['billing_configuration/created', 'generation_delay_days', 'generation_delay_days'],
  ])('%s %s', (topic, field, column) => {
    expect(typed(classify(withField(topic, field, '2147483647')), column)).toBe(2147483647);
    for (const raw of ['2147483648', '-2147483649', '1e20', '30.5', '"30"']) {
      expect(refusal(classify(withField(topic, field, raw))), raw).toMatch(new RegExp(`^invalid_shape/invalid_field: ${field}: `));
    }
  });
});

describe('text Postgres cannot store', () => {
  it.each([
    ['order/confirmed', 'external_reference_id'],
    ['order/confirmed', 'order_state'],
    ['payout/complete', 'sepa_instruction_id'],
    ['invoice/created', 'external_reference_id'],
    ['factoring/pending', 'payment_method'],
  ])('%s %s: NUL and unpaired surrogates are invalid_shape with the field named', (topic, field) => {
    for (const raw of ['"A\\u0000B"', '"N\\ud800"', '"\\udc00N"', '"\\udc00\\ud800"']) {
      expect(refusal(classify(withField(topic, field, raw))), raw).toMatch(new RegExp(`^invalid_shape/invalid_field: ${field}: `));
    }
    // A proper pair is a character like any other.
    expect(classify(withField(topic, field, '"\\ud83d\\ude00"'))).toMatchObject({ status: 'parsed' });
  });

  it('refuses a bad element of external_reference_ids', () => {
    expect(refusal(classify(withField('payout/complete', 'external_reference_ids', '["INV-1","INV-\\u0000"]')))).toContain('external_reference_ids');
  });

  it('refuses references longer than a btree index entry can hold', () => {
    const long = `"${'Ω'.repeat(513)}"`;
    expect(refusal(classify(withField('payout/complete', 'sepa_instruction_id', long)))).toContain('sepa_instruction_id');
    expect(classify(withField('payout/complete', 'sepa_instruction_id', `"${'Ω'.repeat(512)}"`))).toMatchObject({ status: 'parsed' });
  });

  it('stores an unknown topic holding NUL or a lone surrogate under a storable label', () => {
    for (const topic of ['order/\\u0000x', 'N\\ud800', `${'x'.repeat(199)}\\ud83d\\ude00`]) {
      const c = classify(`{"topic":"${topic}"}`);
      expect(c).toMatchObject({ ok: true, status: 'unknown_topic', reason: 'unknown_topic' });
      if (c.ok) {
        expect(isStorableText(c.topic ?? '')).toBe(true);
        expect(isStorableText(c.error ?? '')).toBe(true);
      }
    }
  });
});

describe('values kept whole in jsonb', () => {
  const deep = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

  it('refuses bank_account or applicant.buyer nested 10,000 deep, naming the field', () => {
    expect(refusal(classify(nested('order/confirmed', 'bank_account', 'extra', deep(10_000))))).toMatch(/^invalid_shape\/invalid_field: bank_account: .*nesting deeper/);
    const applicant = samplePayload('applicant/pending') as { applicant: { buyer: Record<string, unknown> } };
    applicant.applicant.buyer.extra = '__VALUE__';
    const raw = JSON.stringify(applicant).replace('"__VALUE__"', deep(10_000));
    expect(refusal(classify(raw))).toMatch(/^invalid_shape\/invalid_field: applicant\.buyer: .*nesting deeper/);
  });

  it('keeps extra members that are storable, and refuses NUL in a key or value and infinite numbers', () => {
    const ok = classify(nested('order/confirmed', 'bank_account', 'extra', `{"a":[1,"x",{"b":null}]}`));
    expect(typed(ok, 'bank_account')).toMatchObject({ extra: { a: [1, 'x', { b: null }] } });
    expect(refusal(classify(nested('order/confirmed', 'bank_account', 'extra', '"x\\u0000"')))).toContain('bank_account');
    expect(refusal(classify(nested('order/confirmed', 'bank_account', 'e\\u0000', '1').replace('"e\\\\u0000"', '"e\\u0000"')))).toContain('bank_account');
    expect(refusal(classify(nested('order/confirmed', 'bank_account', 'extra', '1e400')))).toContain('bank_account');
  });

  it('jsonbProblem allows exactly MAX_JSONB_DEPTH levels', () => {
    let value: unknown = 1;
    for (let i = 0; i < MAX_JSONB_DEPTH; i++) value = [value];
    expect(jsonbProblem(value)).toBeUndefined();
    expect(jsonbProblem([value])).toMatch(/nesting deeper/);
  });
});

describe('number literals and storable text', () => {
  it('maps member paths to the literal text, skipping arrays and deeper members', () => {
    const found = numberLiterals('{"a":1e3,"s":"x\\"1.5","b":{"c":-0.50,"d":[7],"e":{"f":9}},"g":[{"h":8}],"a":12}', 2);
    expect(Object.fromEntries(found)).toEqual({ [pathKey(['a'])]: '12', [pathKey(['b', 'c'])]: '-0.50' });
  });

  it('replaces only what Postgres refuses', () => {
    expect(storableText('a\u0000b\ud800c\udc00\ud83d\ude00')).toBe('a\ufffdb\ufffdc\ufffd\ud83d\ude00');
    expect(storableText('plain')).toBe('plain');
  });
});
