/**
 * DATABASE_URL as libpq and postgres.js read it: one host, or several
 * (`postgres://user:pw@h1:5432,h2:5432/db?target_session_attrs=read-write`), which the WHATWG URL
 * parser refuses (a port cannot hold a comma). Pure: no I/O.
 */
export interface DatabaseUrl {
  /** `postgres://` or `postgresql://` */
  scheme: string;
  /** `user:password@`, or '' */
  auth: string;
  /** `host:port` or `host`, in the order given */
  hosts: string[];
  /** `/db`, or '' */
  path: string;
  params: URLSearchParams;
}

/** What the daemon accepts for target_session_attrs: it must write. */
export const WRITABLE_SESSION_ATTRS = ['read-write', 'primary'] as const;

// The user and password end at the last '@' before the path: a password with a raw '@' (which
// postgres.js takes) was read as part of the host, and the message naming the host printed it.
const SHAPE = /^(postgres(?:ql)?:\/\/)(?:([^/?#]*)@)?([^@/?#]*)([^?#]*)(?:\?([^#]*))?$/;

export function parseDatabaseUrl(url: string): DatabaseUrl | undefined {
  const match = SHAPE.exec(url);
  if (!match) return undefined;
  const hosts = match[3]!.split(',');
  if (hosts.some((h) => h === '')) return undefined;
  // Each host must make a valid URL on its own (a port is a number, no stray characters).
  for (const host of hosts) {
    try {
      new URL(`postgres://${host}/`);
    } catch {
      return undefined;
    }
  }
  return { scheme: match[1]!, auth: match[2] === undefined ? '' : `${match[2]}@`, hosts, path: match[4] ?? '', params: new URLSearchParams(match[5] ?? '') };
}

/** Why the URL cannot be used, or undefined. */
export function databaseUrlProblem(url: string): string | undefined {
  const parsed = parseDatabaseUrl(url);
  if (!parsed) return 'not a postgres:// or postgresql:// URL (several hosts are written host1:port1,host2:port2)';
  const attrs = parsed.params.get('target_session_attrs');
  if (attrs !== null && attrs !== 'any' && !(WRITABLE_SESSION_ATTRS as readonly string[]).includes(attrs)) {
    return `target_session_attrs=${attrs}: the daemon writes, so only read-write, primary or any are accepted`;
  }
  return undefined;
}

export function formatDatabaseUrl(url: DatabaseUrl, hosts = url.hosts): string {
  const query = url.params.toString();
  return `${url.scheme}${url.auth}${hosts.join(',')}${url.path}${query ? `?${query}` : ''}`;
}

/** Where the URL points, for messages: hosts and database, never the password. */
export function describeDatabaseUrl(url: string): string {
  const parsed = parseDatabaseUrl(url);
  if (!parsed) return '(an unparseable URL)';
  return `${parsed.hosts.map((h) => (h.includes(':') ? h : `${h}:5432`)).join(',')}${parsed.path}`;
}
