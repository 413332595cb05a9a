import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { weakSecretReason } from './secret-strength.js';

export interface NamedToken {
  name: string;
  token: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The shared OPERATOR_TOKEN's name: no named token may take it (both would record 'operator:api'). */
export const SHARED_TOKEN_NAME = 'api';

/**
 * OPERATOR_TOKENS=name:token,name:token: one token per person, so the acknowledgement history says
 * who. Messages never repeat a token (config errors are printed).
 */
export const operatorTokensSchema = z.string().transform((value, ctx): NamedToken[] => {
  const entries: NamedToken[] = [];
  for (const [i, part] of value.split(',').map((s) => s.trim()).filter((s) => s !== '').entries()) {
    const colon = part.indexOf(':');
    const name = colon > 0 ? part.slice(0, colon).trim() : '';
    const token = colon > 0 ? part.slice(colon + 1).trim() : '';
    if (!NAME.test(name)) {
      ctx.addIssue({ code: 'custom', message: `entry ${i + 1} must be name:token with a name of letters, digits, . _ - (up to 64)` });
      return z.NEVER;
    }
    if (name.toLowerCase() === SHARED_TOKEN_NAME) {
      ctx.addIssue({ code: 'custom', message: `the name '${name}' is the shared OPERATOR_TOKEN's: choose another` });
      return z.NEVER;
    }
    const weak = weakSecretReason(token);
    if (weak !== undefined) {
      ctx.addIssue({ code: 'custom', message: `the token of '${name}' ${weak}` });
      return z.NEVER;
    }
    if (entries.some((e) => e.name === name)) {
      ctx.addIssue({ code: 'custom', message: `the name '${name}' is given twice` });
      return z.NEVER;
    }
    if (entries.some((e) => e.token === token)) {
      ctx.addIssue({ code: 'custom', message: `the token of '${name}' is also another name's: each person needs their own` });
      return z.NEVER;
    }
    entries.push({ name, token });
  }
  return entries;
});

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

export interface TokenMatcher {
  /** No token configured at all: the operator API is off. */
  readonly disabled: boolean;
  /** The name behind a presented token, or undefined. Every token is compared, in constant time. */
  identify(presented: string): { name: string; shared: boolean } | undefined;
}

/**
 * The shared OPERATOR_TOKEN (name 'api', as before named tokens existed) and the named ones.
 * Comparing fixed-length sha256 digests with timingSafeEqual, and always all of them, keeps the
 * time independent of how much of a token was right and of which one matched.
 */
export function tokenMatcher(shared: string | undefined, named: readonly NamedToken[]): TokenMatcher {
  const known = [
    ...(shared !== undefined ? [{ name: SHARED_TOKEN_NAME, shared: true, hash: digest(shared) }] : []),
    ...named.map((n) => ({ name: n.name, shared: false, hash: digest(n.token) })),
  ];
  return {
    disabled: known.length === 0,
    identify(presented) {
      const given = digest(presented);
      let found: { name: string; shared: boolean } | undefined;
      for (const k of known) {
        if (timingSafeEqual(given, k.hash) && found === undefined) found = { name: k.name, shared: k.shared };
      }
      return found;
    },
  };
}
