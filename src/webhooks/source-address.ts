import { addressMatcher, normaliseAddress, splitList, type AddressMatcher } from '../config/addresses.js';
import type { ProviderEnvironment } from '../config/schema.js';

export { normaliseAddress } from '../config/addresses.js';

/** The spec's "Webhook authenticity" table: the fixed addresses deliveries come from. */
export const SPEC_SOURCE_ADDRESSES: Record<ProviderEnvironment, readonly string[]> = {
  sandbox: ['3.67.101.172', '3.69.55.142', '3.72.30.70', '34.159.77.21'],
  production: ['3.68.36.187', '3.127.195.5', '18.194.230.169', '34.185.141.246'],
};

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
