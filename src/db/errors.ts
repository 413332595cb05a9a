/**
 * Which database failures mean "the ledger is unavailable, try again later" (answer 503, retry the
 * pass) rather than "this statement is wrong". postgres.js reports network trouble with its own
 * string codes and server trouble with SQLSTATE codes.
 */
const TRANSIENT_DRIVER_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

export const SQLSTATE = {
  ADMIN_SHUTDOWN: '57P01',
  CRASH_SHUTDOWN: '57P02',
  CANNOT_CONNECT_NOW: '57P03',
  TOO_MANY_CONNECTIONS: '53300',
  SERIALIZATION_FAILURE: '40001',
  DEADLOCK_DETECTED: '40P01',
  UNIQUE_VIOLATION: '23505',
  INVALID_CATALOG_NAME: '3D000',
} as const;

const TRANSIENT_SQLSTATES = new Set<string>([
  SQLSTATE.ADMIN_SHUTDOWN,
  SQLSTATE.CRASH_SHUTDOWN,
  SQLSTATE.CANNOT_CONNECT_NOW,
  SQLSTATE.TOO_MANY_CONNECTIONS,
  SQLSTATE.SERIALIZATION_FAILURE,
  SQLSTATE.DEADLOCK_DETECTED,
]);

export function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** True when the failure is about reaching the database, not about the statement. */
export function isTransientDatabaseError(error: unknown): boolean {
  const code = errorCode(error);
  if (code === undefined) return false;
  if (TRANSIENT_DRIVER_CODES.has(code) || TRANSIENT_SQLSTATES.has(code)) return true;
  return code.startsWith('08'); // connection exception class
}
