import { BlockList, isIP } from 'node:net';

/**
 * Address settings (WEBHOOK_ALLOWED_IPS, TRUSTED_PROXIES): comma-separated IPv4/IPv6 addresses and
 * CIDR ranges ("10.244.0.0/16", "2001:db8::/32"). Anything else is refused when the config is read,
 * so a typo cannot silently turn into "every delivery gets 403".
 */

export interface AddressMatcher {
  has(address: string): boolean;
}

/**
 * "::ffff:1.2.3.4" and "1.2.3.4" are the same sender, and so are "::FFFF:1.2.3.4",
 * "::ffff:102:304" and "0:0:0:0:0:ffff:1.2.3.4": an IPv4-mapped IPv6 address becomes its IPv4
 * address, whatever its spelling. Anything else is returned trimmed.
 */
export function normaliseAddress(address: string): string {
  const trimmed = address.trim();
  if (isIP(trimmed) !== 6) return trimmed;
  const groups = ipv6Groups(trimmed);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return trimmed;
}

/** The eight 16-bit groups of a valid IPv6 address ("::" expanded, a dotted IPv4 tail read, a zone dropped). */
function ipv6Groups(address: string): number[] {
  const bare = address.split('%')[0]!.toLowerCase();
  const part = (text: string | undefined): number[] =>
    text === undefined || text === '' ? [] : text.split(':').flatMap((g) => {
      if (!g.includes('.')) return [Number.parseInt(g, 16)];
      const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
      return [(a << 8) | b, (c << 8) | d];
    });
  const [head, tail] = bare.split('::');
  const first = part(head);
  if (tail === undefined) return first;
  const last = part(tail);
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}

type Entry = { address: string; family: 4 | 6; prefix?: number };

/** One list entry, or a reason it is not an address or a CIDR range. */
export function parseAddressEntry(entry: string): Entry | { error: string } {
  const [address = '', prefixText, extra] = entry.trim().split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return { error: `'${entry}' is not an IP address or CIDR range` };
  if (prefixText === undefined) return { address: normaliseAddress(address), family: isIP(normaliseAddress(address)) as 4 | 6 };
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return { error: `'${entry}' has a prefix length outside 0-${max}` };
  const prefix = Number(prefixText);
  const ipv4 = normaliseAddress(address);
  if (family === 6 && isIP(ipv4) === 4) {
    // An IPv4-mapped range ("::ffff:10.0.0.0/104") is the IPv4 range under its last 32 bits, and
    // `has` checks every mapped sender as IPv4, so it is kept as that range (10.0.0.0/8). Under 96
    // bits the mask reaches into ::ffff itself and the range holds every IPv4 address:
    // "::ffff:10.0.0.0/8", meant as 10.0.0.0/8, would trust or allow every IPv4 sender.
    if (prefix < 96) {
      return { error: `'${entry}' is an IPv4-mapped address with a prefix length under 96, a range that holds every IPv4 address; write the IPv4 range (${ipv4}/N) or a prefix of 96-128` };
    }
    return { address: ipv4, family: 4, prefix: prefix - 96 };
  }
  return { address, family: family as 4 | 6, prefix };
}

export function splitList(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

/** The first entry of a list that is not an address or CIDR range, as a message; undefined when all are. */
export function addressListError(entries: readonly string[]): string | undefined {
  for (const entry of entries) {
    const parsed = parseAddressEntry(entry);
    if ('error' in parsed) return parsed.error;
  }
  return undefined;
}

/**
 * Answers a matcher remembers, per address as given. The receiver asks about every delivery's peer,
 * and a provider sends from a handful of addresses; BlockList.check builds a SocketAddress for each
 * question (5 µs of the receiver's ~165 µs of CPU per delivery in a profile at 8 connections,
 * bench/README.md ingest). Bounded: a sender rotating addresses only empties it.
 */
const MATCHER_MEMO_LIMIT = 4096;

/** A matcher over validated entries (the config schema has refused anything else). */
export function addressMatcher(entries: readonly string[]): AddressMatcher {
  const list = new BlockList();
  let empty = true;
  for (const entry of entries) {
    const parsed = parseAddressEntry(entry);
    if ('error' in parsed) throw new Error(parsed.error);
    const type = parsed.family === 4 ? 'ipv4' : 'ipv6';
    if (parsed.prefix === undefined) list.addAddress(parsed.address, type);
    else list.addSubnet(parsed.address, parsed.prefix, type);
    empty = false;
  }
  if (empty) return { has: () => false };
  const memo = new Map<string, boolean>();
  return {
    has(address) {
      let known = memo.get(address);
      if (known === undefined) {
        const normalised = normaliseAddress(address);
        const family = isIP(normalised);
        known = family !== 0 && list.check(normalised, family === 4 ? 'ipv4' : 'ipv6');
        if (memo.size >= MATCHER_MEMO_LIMIT) memo.clear();
        memo.set(address, known);
      }
      return known;
    },
  };
}

/**
 * One X-Forwarded-For entry as an address: some proxies append the peer's port ("203.0.113.7:51234",
 * "[2001:db8::7]:443"; RFC 7239's Forwarded brackets IPv6 too) or an IPv6 zone ("fe80::1%eth0").
 * Kept with its port, an entry matched no allow list or trusted proxy, and every new source port
 * was a sender of its own to the sign-in throttle. Anything else is returned trimmed, as it came.
 */
export function forwardedHop(entry: string): string {
  let hop = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (bracketed) hop = bracketed[1] as string;
  // "203.0.113.7:51234", and "::ffff:203.0.113.7:51234" as a dual-stack proxy writes an IPv4 peer:
  // not an address with the port, one without it. (An IPv6 address with a port needs brackets:
  // "2001:db8::7:443" is itself an address.)
  else if (isIP(hop) === 0 && /:\d{1,5}$/.test(hop) && isIP(hop.slice(0, hop.lastIndexOf(':'))) !== 0) hop = hop.slice(0, hop.lastIndexOf(':'));
  const zone = hop.indexOf('%');
  if (zone > 0 && isIP(hop.slice(0, zone)) === 6) hop = hop.slice(0, zone);
  return normaliseAddress(hop);
}

/**
 * The key a sender is counted under where counting limits it (the sign-in throttle): an IPv4
 * address itself, an IPv6 address by its /64. One customer line or host is given a /64 or more, and
 * every address in it is theirs to use: keyed by the whole address, a guesser rotating through its
 * /64 was never throttled. Not an IP address: the text itself.
 */
export function senderKey(address: string): string {
  const normalised = normaliseAddress(address);
  if (isIP(normalised) !== 6) return normalised;
  return `${ipv6Groups(normalised).slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/**
 * The address a request came from (a webhook delivery, an operator signing in). X-Forwarded-For is believed only when the peer is a trusted
 * proxy, and then read from the right, skipping further trusted proxies: the left-most entries are
 * whatever the client chose to send.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trustedProxies: AddressMatcher): string | undefined {
  if (peer === undefined) return undefined;
  let address = normaliseAddress(peer);
  if (!trustedProxies.has(address) || !forwardedFor) return address;
  const hops = forwardedFor.split(',').map(forwardedHop).filter((hop) => hop.length > 0);
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = hops[i] as string;
    address = hop;
    if (!trustedProxies.has(hop)) break;
  }
  return address;
}
