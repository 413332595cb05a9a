import { addressMatcher, splitList, type AddressMatcher } from '../config/addresses.js';
import type { ProviderEnvironment } from '../config/schema.js';
import { SPEC_SOURCE_ADDRESSES } from '../provider/vocabulary.js';

export { clientAddress, normaliseAddress } from '../config/addresses.js';
export { SPEC_SOURCE_ADDRESSES };


/** `undefined` setting: no check. `spec`: the spec's addresses for the environment. Else addresses and CIDR ranges. */
export function allowedAddresses(setting: string | undefined, environment: ProviderEnvironment): AddressMatcher | undefined {
  if (setting === undefined || setting.trim() === '') return undefined;
  if (setting.trim() === 'spec') return addressMatcher(SPEC_SOURCE_ADDRESSES[environment]);
  return addressMatcher(splitList(setting));
}
