import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The spec's signature: HMAC-SHA-256 of the raw body bytes, keyed with the webhook secret, hex. */
export function computeSignature(rawBody: Buffer, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

// Secrets are few and change only on rotation; a matched delivery must not pay a SHA-256 for them.
const fingerprints = new Map<string, string>();

/** A short, non-reversible name for a secret, safe to log and to store. */
export function secretFingerprint(secret: string): string {
  let fingerprint = fingerprints.get(secret);
  if (fingerprint === undefined) {
    fingerprint = createHash('sha256').update(secret).digest('hex').slice(0, 12);
    if (fingerprints.size >= 64) fingerprints.clear(); // rotations over a long uptime must not grow it
    fingerprints.set(secret, fingerprint);
  }
  return fingerprint;
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

export interface SignatureCheck {
  valid: boolean;
  /** Fingerprint of the secret that matched. */
  keyFingerprint?: string;
}

/**
 * Accepts the header when any current secret (rotation) produces the same digest. The digests are
 * compared as bytes in constant time; a header that is not 64 hex digits never matches. Every secret
 * is tried even after a match so the time taken does not tell which one matched.
 */
export function verifySignature(rawBody: Buffer, header: string | undefined, secrets: readonly string[]): SignatureCheck {
  if (header === undefined) return { valid: false };
  const candidate = header.trim();
  if (!HEX_SHA256.test(candidate)) return { valid: false };
  const given = Buffer.from(candidate, 'hex');
  let matched: string | undefined;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    if (timingSafeEqual(expected, given) && matched === undefined) matched = secret;
  }
  return matched === undefined ? { valid: false } : { valid: true, keyFingerprint: secretFingerprint(matched) };
}
