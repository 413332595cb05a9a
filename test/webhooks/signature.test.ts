import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeSignature, secretFingerprint, verifySignature } from '../../src/webhooks/signature.js';

/** The independent tool: openssl's HMAC over the exact file bytes. */
function opensslHmac(body: Buffer, secret: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'sig-')), 'body');
  writeFileSync(file, body);
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret, file], { encoding: 'utf8' });
  return (out.trim().split(/\s+/).pop() ?? '').toLowerCase();
}

describe('webhook signature', () => {
  const secret = 'whsec_test_0123456789';
  // CRLF and non-ASCII bytes: the digest covers the raw bytes, line endings included.
  const body = Buffer.from('{"topic":"order/confirmed",\r\n"name":"Müller & Söhne"}\n', 'utf8');

  it('accepts a signature computed by openssl over the raw bytes', () => {
    const signature = opensslHmac(body, secret);
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(computeSignature(body, secret)).toBe(signature);
    expect(verifySignature(body, signature, [secret])).toEqual({ valid: true, keyFingerprint: secretFingerprint(secret) });
    expect(verifySignature(body, signature.toUpperCase(), [secret]).valid).toBe(true);
  });

  it('refuses the signature after a one-byte change of the body', () => {
    const signature = opensslHmac(body, secret);
    const changed = Buffer.from(body);
    changed[5] = (changed[5] as number) ^ 0x01;
    expect(verifySignature(changed, signature, [secret]).valid).toBe(false);
  });

  it('refuses a missing, truncated, base64 or foreign-key signature', () => {
    const hex = computeSignature(body, secret);
    expect(verifySignature(body, undefined, [secret]).valid).toBe(false);
    expect(verifySignature(body, hex.slice(0, 63), [secret]).valid).toBe(false);
    expect(verifySignature(body, Buffer.from(hex, 'hex').toString('base64'), [secret]).valid).toBe(false);
    expect(verifySignature(body, computeSignature(body, 'other-secret'), [secret]).valid).toBe(false);
    expect(verifySignature(body, hex, []).valid).toBe(false);
  });

  it('accepts any of the current secrets during rotation and names the one that matched', () => {
    const old = 'old-secret';
    const signature = computeSignature(body, old);
    const check = verifySignature(body, signature, ['new-secret', old]);
    expect(check).toEqual({ valid: true, keyFingerprint: secretFingerprint(old) });
    expect(check.keyFingerprint).not.toContain(old);
  });

  it('fingerprints a secret as the first 12 hex of its SHA-256 (openssl), the same after 100 other secrets', () => {
    const opensslSha256 = (text: string) => {
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'fp-')), 'secret');
      writeFileSync(file, text);
      return (execFileSync('openssl', ['dgst', '-sha256', file], { encoding: 'utf8' }).trim().split(/\s+/).pop() ?? '').toLowerCase();
    };
    const expected = opensslSha256(secret).slice(0, 12);
    expect(secretFingerprint(secret)).toBe(expected);
    const others = Array.from({ length: 100 }, (_, i) => `rotated-${i}`);
    for (const other of others) secretFingerprint(other);
    expect(secretFingerprint(secret)).toBe(expected);
    expect(secretFingerprint('rotated-7')).toBe(opensslSha256('rotated-7').slice(0, 12));
  });
});
