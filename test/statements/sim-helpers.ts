import type { FaultRates } from '../../sim/index.js';

/** Every payout fault at once (their rates sum to under 1), and no order faults. */
export const PAYOUT_FAULTS: Partial<FaultRates> = {
  payoutAmountMismatch: 0.15,
  payoutNoCredit: 0.15,
  payoutUnknownInvoice: 0.15,
  payoutCancelledCredited: 0.15,
  payoutDuplicateSepa: 0.1,
  creditWithoutPayout: 0.5,
};
