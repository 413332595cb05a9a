import { addressMatcher, normaliseAddress, splitList, type AddressMatcher } from '../config/addresses.js';
import type { ProviderEnvironment } from '../config/schema.js';
import { SPEC_SOURCE_ADDRESSES } from '../provider/vocabulary.js';

export { normaliseAddress } from '../config/addresses.js';
export { SPEC_SOURCE_ADDRESSES };


/**
 * The address a delivery came from. X-Forwarded-For is believed only when the peer is a trusted
 * proxy, and then read from the right, skipping further trusted proxies: the left-most entries are
 * whatever the client chose to send.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trustedProxies: AddressMatcher): string | undefined {
  if (peer === undefined) return undefined;
  let address = normaliseAddress(peer);
  if (!trustedProxies.has(address) || !forwardedFor) return address;
  const hops = forwardedFor.split(',').map(normaliseAddress).filter((hop) => hop.length > 0);
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = hops[i] as string;
    address = hop;
    if (!trustedProxies.has(hop)) break;
  }
  return address;
}

/** `undefined` setting: no check. `spec`: the spec's addresses for the environment. Else addresses and CIDR ranges. */
export function allowedAddresses(setting: string | undefined, environment: ProviderEnvironment): AddressMatcher | undefined {
  if (setting === undefined || setting.trim() === '') return undefined;
  if (setting.trim() === 'spec') return addressMatcher(SPEC_SOURCE_ADDRESSES[environment]);
  return addressMatcher(splitList(setting));
}
