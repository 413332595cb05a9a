import type { Business } from './business.js';
import { startBuyers } from './business-buyers.js';
import { startOrders } from './business-orders.js';
import { startPayoutsAndBank } from './business-payouts.js';

/** Starts a simulated merchant business: its buyers, its orders and invoices, its payouts and bank lines. */
export function beginBusiness(business: Business): void {
  business.begin([startBuyers, startOrders, startPayoutsAndBank]);
}
