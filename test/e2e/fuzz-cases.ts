import fc from 'fast-check';
import { computeSignature } from '../../src/webhooks/signature.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import type { RawPlan } from './raw-http.js';

/**
 * Hostile requests for the receiver, as raw bytes: bodies (random JSON, deep nesting, huge
 * strings, invalid UTF-8, NUL), headers (missing, duplicate, oversized or wrong signature, odd
 * content types, giant headers) and framing (chunked with bad sizes, Content-Length mismatches,
 * truncation, slow and silent clients, pipelining). Each case says what the receiver must do.
 */
export interface FuzzCase {
  label: string;
  plan: RawPlan;
  /** requests the plan carries */
  requests: number;
  /** signed, well framed JSON within the size limit: each request must be answered 200 (or 503) and stored */
  mustStore: boolean;
  /** the body of each request when mustStore, to compare with the ledger's raw bytes */
  bodies: Buffer[];
  /** the client goes silent mid-request: the server must cut it off within its request timeout */
  hold: boolean;
}

export interface FuzzLimits {
  secret: string;
  maxBodyBytes: number;
  /** the client's own give-up time for any exchange */
  limitMs: number;
}

const enc = (s: string) => Buffer.from(s, 'utf8');
const deep = (open: string, close: string, depth: number) => enc(`${open.repeat(depth)}1${close.repeat(depth)}`);

const bodyArb: fc.Arbitrary<{ kind: string; bytes: Buffer }> = fc.oneof(
  { weight: 30, arbitrary: fc.integer({ min: 1, max: 1e9 }).map((n) => ({ kind: 'sample', bytes: enc(JSON.stringify(samplePayload('order/confirmed', n))) })) },
  {
    weight: 20,
    arbitrary: fc.tuple(fc.integer({ min: 1, max: 1e9 }), fc.constantFrom('order_uuid', 'order_state', 'event_time', 'buyer', 'topic', 'x'), fc.jsonValue({ maxDepth: 4 })).map(([n, key, value]) => ({
      kind: 'sample-member',
      bytes: enc(JSON.stringify({ ...samplePayload('order/confirmed', n), [key]: value })),
    })),
  },
  { weight: 15, arbitrary: fc.json({ maxDepth: 5 }).map((s) => ({ kind: 'json', bytes: enc(s) })) },
  { weight: 5, arbitrary: fc.tuple(fc.constantFrom(['[', ']'], ['{"a":', '}']), fc.integer({ min: 100, max: 60_000 })).map(([[o, c], d]) => ({ kind: 'deep', bytes: deep(o!, c!, d) })) },
  { weight: 2, arbitrary: fc.integer({ min: 10_000, max: 1_150_000 }).map((n) => ({ kind: 'huge-string', bytes: enc(JSON.stringify({ topic: 'order/confirmed', note: 'é'.repeat(n / 2) })) })) },
  {
    weight: 8,
    arbitrary: fc.tuple(fc.integer({ min: 1, max: 1e9 }), fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x00], [0x00, 0x00])).map(([n, bad]) => {
      const text = JSON.stringify({ ...samplePayload('order/confirmed', n), external_reference_id: 'AB' });
      const at = text.indexOf('AB') + 1;
      return { kind: bad[0] === 0 ? 'raw-nul' : 'bad-utf8', bytes: Buffer.concat([enc(text.slice(0, at)), Buffer.from(bad), enc(text.slice(at))]) };
    }),
  },
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 1e9 }).map((n) => ({ kind: 'nul-escape', bytes: enc(JSON.stringify({ ...samplePayload('order/confirmed', n), topic: 'order/\u0000confirmed', buyer: { name: 'A\u0000B' } })) })) },
  { weight: 5, arbitrary: fc.uint8Array({ maxLength: 3000 }).map((a) => ({ kind: 'bytes', bytes: Buffer.from(a) })) },
);

type Sig = 'valid' | 'missing' | 'wrong' | 'duplicate' | 'oversized' | 'uppercase';
const sigArb = fc.constantFrom<Sig>('valid', 'valid', 'valid', 'valid', 'valid', 'valid', 'missing', 'wrong', 'duplicate', 'oversized', 'uppercase');
const typeArb = fc.constantFrom<string | undefined>('application/json', 'application/json', 'text/plain', undefined, 'application/x-www-form-urlencoded', 'application/json; charset=latin1', '*/*');
type Framing = 'length' | 'chunked' | 'chunked-bad' | 'cl-short' | 'cl-long' | 'cl-te' | 'cl-dup' | 'giant-header' | 'pipelined' | 'slow' | 'truncated' | 'hold' | 'wrong-route';
const framingArb = fc.constantFrom<Framing>(
  ...(Array(12).fill('length') as Framing[]), 'length', 'chunked', 'chunked', 'chunked-bad', 'cl-short', 'cl-long', 'cl-te', 'cl-dup', 'giant-header',
  'pipelined', 'pipelined', 'slow', 'truncated', 'truncated', 'wrong-route',
);

function signatureHeaders(sig: Sig, body: Buffer, secret: string): string[] {
  const good = computeSignature(body, secret);
  switch (sig) {
    case 'valid': return [`X-Service-Signature: ${good}`];
    case 'uppercase': return [`X-SERVICE-SIGNATURE: ${good}`];
    case 'missing': return [];
    case 'wrong': return [`X-Service-Signature: ${computeSignature(body, 'not-the-secret')}`];
    case 'duplicate': return [`X-Service-Signature: ${good}`, `X-Service-Signature: ${'0'.repeat(64)}`];
    case 'oversized': return [`X-Service-Signature: ${good.repeat(400)}`];
  }
}

function head(lines: string[], path = '/webhooks', method = 'POST'): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`;
}

function chunked(body: Buffer, pieces: number): Buffer {
  const parts: Buffer[] = [];
  const size = Math.max(1, Math.ceil(body.length / pieces));
  for (let at = 0; at < body.length; at += size) {
    const part = body.subarray(at, at + size);
    parts.push(enc(`${part.length.toString(16)}\r\n`), part, enc('\r\n'));
  }
  parts.push(enc('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function isStorableJson(bytes: Buffer, maxBodyBytes: number): boolean {
  if (bytes.length > maxBodyBytes) return false;
  try {
    JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return true;
  } catch {
    return false;
  }
}

export function fuzzCaseArb(limits: FuzzLimits): fc.Arbitrary<FuzzCase> {
  return fc.record({ body: bodyArb, sig: sigArb, type: typeArb, framing: framingArb, cut: fc.double({ min: 0.05, max: 0.95, noNaN: true }), pieces: fc.integer({ min: 2, max: 6 }) }).map(({ body, sig, type, framing, cut, pieces }) => {
    const bytes = body.bytes;
    const base = [...signatureHeaders(sig, bytes, limits.secret), ...(type ? [`Content-Type: ${type}`] : [])];
    const label = `${framing}/${sig}/${type ?? 'no-type'}/${body.kind}(${bytes.length} B)`;
    const plan = (chunks: Buffer[], then: RawPlan['then'] = 'wait', gapMs = 0): RawPlan => ({ chunks, gapMs, then, limitMs: limits.limitMs });
    const simple = (chunks: Buffer[], then: RawPlan['then'] = 'wait', gapMs = 0, mustStore = false): FuzzCase => ({
      label, plan: plan(chunks, then, gapMs), requests: 1, mustStore, bodies: mustStore ? [bytes] : [], hold: false,
    });
    const signedJson = (sig === 'valid' || sig === 'uppercase') && isStorableJson(bytes, limits.maxBodyBytes);
    const whole = Buffer.concat([enc(head([...base, `Content-Length: ${bytes.length}`, 'Connection: close'])), bytes]);
    switch (framing) {
      case 'length':
        return simple([whole], 'wait', 0, signedJson);
      case 'chunked':
        return simple([enc(head([...base, 'Transfer-Encoding: chunked', 'Connection: close'])), chunked(bytes, pieces)], 'wait', 0, signedJson);
      case 'chunked-bad': {
        const size = ['zz', '-5', 'ffffffffffffffffff', (bytes.length + 50).toString(16), '1;' + 'x'.repeat(9000)][pieces % 5]!;
        return simple([enc(head([...base, 'Transfer-Encoding: chunked', 'Connection: close'])), enc(`${size}\r\n`), bytes, enc('\r\n0\r\n\r\n')], 'half-close');
      }
      case 'cl-short':
        return simple([enc(head([...base, `Content-Length: ${bytes.length + 1 + Math.floor(cut * 1000)}`, 'Connection: close'])), bytes], 'half-close');
      case 'cl-long':
        return simple([enc(head([...base, `Content-Length: ${Math.floor(bytes.length * cut)}`])), bytes], 'half-close');
      case 'cl-te':
        return simple([enc(head([...base, `Content-Length: ${bytes.length}`, 'Transfer-Encoding: chunked', 'Connection: close'])), chunked(bytes, pieces)], 'half-close');
      case 'cl-dup':
        return simple([enc(head([...base, `Content-Length: ${bytes.length}`, `Content-Length: ${bytes.length + 1}`, 'Connection: close'])), bytes], 'half-close');
      case 'giant-header':
        return simple([enc(head([...base, `X-Pad: ${'a'.repeat(17_000 + Math.floor(cut * 60_000))}`, `Content-Length: ${bytes.length}`, 'Connection: close'])), bytes], 'half-close');
      case 'wrong-route':
        return simple([enc(head([...base, `Content-Length: ${bytes.length}`, 'Connection: close'], pieces % 2 ? '/webhooks/../api/x' : '/nowhere', pieces % 3 ? 'POST' : 'PUT')), bytes]);
      case 'pipelined': {
        const n = pieces;
        const reqs = Array.from({ length: n }, (_, i) => Buffer.concat([enc(head([...base, `Content-Length: ${bytes.length}`, ...(i === n - 1 ? ['Connection: close'] : [])])), bytes]));
        return { label, plan: plan([Buffer.concat(reqs)]), requests: n, mustStore: signedJson, bodies: signedJson ? Array(n).fill(bytes) : [], hold: false };
      }
      case 'slow': {
        const size = Math.ceil(whole.length / pieces);
        const chunks = Array.from({ length: pieces }, (_, i) => whole.subarray(i * size, (i + 1) * size));
        return simple(chunks, 'wait', 20 + Math.floor(cut * 60), signedJson);
      }
      case 'truncated':
        return simple([whole.subarray(0, Math.max(1, Math.floor(whole.length * cut)))], 'half-close');
      case 'hold':
        return { ...simple([whole.subarray(0, Math.max(1, Math.floor(whole.length * cut)))], 'hold'), hold: true };
    }
  });
}

/** Silent clients, kept to a few (each holds a connection until the server's timeout). */
export function holdCaseArb(limits: FuzzLimits): fc.Arbitrary<FuzzCase> {
  return fuzzCaseArb(limits).chain((c) =>
    fc.double({ min: 0.05, max: 0.95, noNaN: true }).map((cut) => {
      const whole = Buffer.concat(c.plan.chunks);
      return { ...c, label: `hold/${c.label}`, mustStore: false, bodies: [], requests: 1, hold: true, plan: { ...c.plan, chunks: [whole.subarray(0, Math.max(1, Math.floor(whole.length * cut)))], then: 'hold' as const } };
    }),
  );
}
