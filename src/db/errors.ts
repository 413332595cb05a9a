/**
 * Which database failures mean "the ledger is unavailable, try again later" (answer 503, retry the
 * pass) rather than "this statement is wrong". postgres.js reports network trouble with its own
 * string codes and server trouble with SQLSTATE codes.
 */
/** Node's codes for a TLS certificate the client does not trust. */
const TLS_CERTIFICATE_CODES = [
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
];

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
  // A Unix socket that is gone (its server or proxy restarting), and routes that are down.
  'ENOENT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'ECONNABORTED',
  // The daemon itself is refused, not a statement: its password (SCRAM) does not check out, or the
  // server asks for an authentication postgres.js does not speak. Nothing it writes can land until
  // an operator fixes the role, so it is the ledger being unavailable (503), never a 500.
  'SASL_SIGNATURE_MISMATCH',
  'AUTH_TYPE_NOT_IMPLEMENTED',
  // The server's TLS certificate is not trusted (expired, self-signed, another host's name): no
  // connection until it is renewed or trusted.
  ...TLS_CERTIFICATE_CODES,
]);

export const SQLSTATE = {
  ADMIN_SHUTDOWN: '57P01',
  CRASH_SHUTDOWN: '57P02',
  CANNOT_CONNECT_NOW: '57P03',
  TOO_MANY_CONNECTIONS: '53300',
  DISK_FULL: '53100',
  READ_ONLY_SQL_TRANSACTION: '25006',
  SERIALIZATION_FAILURE: '40001',
  DEADLOCK_DETECTED: '40P01',
  UNIQUE_VIOLATION: '23505',
  INVALID_CATALOG_NAME: '3D000',
  LOCK_NOT_AVAILABLE: '55P03',
  QUERY_CANCELED: '57014',
  DATABASE_DROPPED: '57P04',
  INSUFFICIENT_PRIVILEGE: '42501',
} as const;

/**
 * Classes of SQLSTATE that are about the server, not the statement: connection exception (08),
 * insufficient resources (53: disk full, out of memory, too many connections), operator
 * intervention (57: shutting down, starting up, a statement cancelled by statement_timeout or
 * pg_cancel_backend, the database being dropped), system error (58: I/O error) and invalid
 * authorization specification (28: the daemon's role does not exist, may not log in, or its password
 * was rotated; pg_hba.conf refuses it): the ledger refuses the daemon itself, and a delivery
 * answered 500 or stored unparsed for it would be lost (test/webhooks/ledger-unavailable.test.ts).
 */
const TRANSIENT_SQLSTATE_CLASSES = ['08', '28', '53', '57', '58'];

/** The codes outside those classes that mean "try again later". */
const TRANSIENT_SQLSTATES = new Set<string>([
  // A standby, a demoted primary, or a server set read-only (default_transaction_read_only, as
  // managed services do when the disk fills): no write can succeed there until a writable primary
  // answers, which a retry may reach.
  SQLSTATE.READ_ONLY_SQL_TRANSACTION,
  SQLSTATE.SERIALIZATION_FAILURE,
  SQLSTATE.DEADLOCK_DETECTED,
  // A lock not granted within lock_timeout: the statement was right and another attempt may pass.
  // Taken, like a cancelled statement, for a refusal of a delivery's values, it had the receiver
  // store a valid delivery unparsed, never applied, and answer 2xx
  // (test/webhooks/ledger-unavailable.test.ts).
  SQLSTATE.LOCK_NOT_AVAILABLE,
  // The ledger's database is missing.
  SQLSTATE.INVALID_CATALOG_NAME,
  // The daemon's role may not read or write a table (a grant missed, a table a migration added):
  // every delivery for it would fail alike until an operator grants it.
  SQLSTATE.INSUFFICIENT_PRIVILEGE,
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
  return /^[0-9A-Z]{5}$/.test(code) && TRANSIENT_SQLSTATE_CLASSES.includes(code.slice(0, 2));
}

/**
 * True when the server refused the statement for the values it carried: a data exception (class 22:
 * out of range, invalid text), an integrity constraint (23) or a value too large for an index
 * (54000). Only such a refusal is a delivery's own; every other failure would refuse any delivery.
 */
export function isRefusalOfValues(error: unknown): boolean {
  const code = errorCode(error);
  if (code === undefined || !/^[0-9A-Z]{5}$/.test(code) || TRANSIENT_DRIVER_CODES.has(code)) return false;
  return code.startsWith('22') || code.startsWith('23') || code === '54000';
}

/** The server refuses writes: a standby, or default_transaction_read_only. */
export function isReadOnlyError(error: unknown): boolean {
  return errorCode(error) === SQLSTATE.READ_ONLY_SQL_TRANSACTION;
}

/** Why the ledger is unavailable, in words an operator acts on; for log lines beside the error. */
export function unavailableCause(error: unknown): string {
  const code = errorCode(error);
  switch (code) {
    case SQLSTATE.READ_ONLY_SQL_TRANSACTION:
      return 'the database refuses writes (a standby, or default_transaction_read_only is on)';
    case SQLSTATE.TOO_MANY_CONNECTIONS:
      return 'no connection slot left on the database (max_connections reached)';
    case SQLSTATE.DISK_FULL:
      return 'the database is out of disk space';
    case SQLSTATE.ADMIN_SHUTDOWN:
    case SQLSTATE.CRASH_SHUTDOWN:
      return 'the database server is shutting down or crashed';
    case SQLSTATE.CANNOT_CONNECT_NOW:
      return 'the database server is starting up or recovering';
    case SQLSTATE.LOCK_NOT_AVAILABLE:
      return 'a lock was not granted within the database\'s lock_timeout';
    case SQLSTATE.QUERY_CANCELED:
      return 'the statement was cancelled (statement_timeout, or cancelled by an operator)';
    case SQLSTATE.INVALID_CATALOG_NAME:
    case SQLSTATE.DATABASE_DROPPED:
      return 'the ledger\'s database does not exist (or is being dropped)';
    case SQLSTATE.INSUFFICIENT_PRIVILEGE:
      return `the daemon's database role lacks a privilege (grant it): ${(error as Error).message}`;
    case 'SASL_SIGNATURE_MISMATCH':
    case 'AUTH_TYPE_NOT_IMPLEMENTED':
      return `the database refuses the daemon's login: ${(error as Error).message}`;
    case 'CONNECT_TIMEOUT':
      return 'no connection to the database within the connect timeout';
    case undefined:
      return (error as Error | undefined)?.message ?? 'unknown';
    default:
      if (code.startsWith('28')) return `the database refuses the daemon's login (role, password or pg_hba.conf): ${(error as Error).message}`;
      if (TLS_CERTIFICATE_CODES.includes(code)) return `the database's TLS certificate is not trusted (${code})`;
      return isTransientDatabaseError(error) ? `the database connection failed (${code})` : `${code}: ${(error as Error).message}`;
  }
}
