export * from './common.js';
export * from './deliveries.js';
export * from './events.js';
export * from './poller.js';
export * from './discrepancies.js';
export * from './statements.js';
export * from './releases.js';
export * from './payout-reports.js';
