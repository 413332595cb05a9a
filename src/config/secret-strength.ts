/**
 * Refuses a shared secret (an operator token, a webhook signing secret) that is a template's
 * placeholder or too guessable to stand between the public port and the ledger: the Kubernetes
 * Secret template's `CHANGE_ME_AT_LEAST_16_CHARS` signed in before this check existed.
 *
 * The estimate is deliberately simple and conservative for random tokens: each character adds
 * log2 of the alphabet its classes suggest (digits 10, lower 26, upper 26, others 33), except a
 * character that only continues a run (`aaa`, `abc`, `987`), and a value that repeats a shorter
 * unit counts that unit once. `openssl rand -hex 32` gives about 330 bits by this count, 16 random
 * hex characters about 80; `aaaaaaaaaaaaaaaa` 10, `passwordpassword` 38. Words are not looked up,
 * so a passphrase of dictionary words passes: the check catches the placeholder and the lazy, not
 * every weak choice.
 */

/** Bits the estimate must reach: 2^64 guesses are out of reach of any online attack. */
export const MIN_SECRET_BITS = 64;
export const MIN_SECRET_LENGTH = 16;

// Lower-case, letters and digits only: `CHANGE_ME`, `change-me` and `changeme` are one placeholder.
const PLACEHOLDERS = ['changeme', 'changeit', 'replaceme', 'placeholder', 'yoursecret', 'yourtoken', 'goeshere', 'example', 'password', 'letmein', 'xxxxxxxx'];

/** Why `value` is refused as a secret, or undefined when it is acceptable. Never quotes the value. */
export function weakSecretReason(value: string): string | undefined {
  if (value.length < MIN_SECRET_LENGTH) return `must be at least ${MIN_SECRET_LENGTH} characters`;
  const folded = value.toLowerCase().replace(/[^a-z0-9]/g, '');
  const placeholder = PLACEHOLDERS.find((p) => folded.includes(p));
  if (placeholder !== undefined) return `is a placeholder (it contains '${placeholder}'): set a random value, e.g. from openssl rand -hex 32`;
  const bits = estimatedBits(value);
  if (bits < MIN_SECRET_BITS) {
    return `is too easy to guess (about ${Math.floor(bits)} bits, ${MIN_SECRET_BITS} needed): set a random value, e.g. from openssl rand -hex 32`;
  }
  return undefined;
}

export function estimatedBits(value: string): number {
  const chars = [...shortestUnit(value)];
  const codes = chars.map((c) => c.codePointAt(0)!);
  let pool = 0;
  if (chars.some((c) => /[0-9]/.test(c))) pool += 10;
  if (chars.some((c) => /[a-z]/.test(c))) pool += 26;
  if (chars.some((c) => /[A-Z]/.test(c))) pool += 26;
  if (chars.some((c) => !/[0-9a-zA-Z]/.test(c))) pool += 33;
  let counted = 0;
  for (let i = 0; i < codes.length; i++) {
    const step = i >= 2 ? codes[i]! - codes[i - 1]! : NaN;
    const continuesRun = Math.abs(step) <= 1 && step === codes[i - 1]! - codes[i - 2]!;
    if (!continuesRun) counted++;
  }
  return counted * Math.log2(Math.max(pool, 2));
}

/** `abcabcabc` -> `abc`; a value that repeats no shorter unit is itself. */
function shortestUnit(value: string): string {
  for (let n = 1; n <= value.length / 2; n++) {
    if (value.length % n === 0 && value.slice(0, n).repeat(value.length / n) === value) return value.slice(0, n);
  }
  return value;
}
