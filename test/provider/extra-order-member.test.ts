import { describe, expect, it } from 'vitest';
import { parseOrdersPage } from '../../src/provider/schemas.js';

/**
 * schemas.ts: "every object tolerates (and drops) fields it does not list". An order that carries
 * an extra member named `order` holding null (any nullable field of that name) is tolerated like
 * any other (schemas.ts `unwrapped`): taken for the `{ order: {...} }` wrapper it failed the page on
 * every poll.
 */
describe('an order with an extra member named "order" holding null', () => {
  it('is read like any other order with an unknown field', () => {
    const uuid = '00000000-0000-4000-8000-000000000001';
    const page = { orders: [{ uuid, state: 'confirmed', external_reference_id: 'R1', order: null }] };
    expect(() => parseOrdersPage(page)).not.toThrow();
    expect(parseOrdersPage(page)).toEqual([{ uuid, state: 'confirmed', external_reference_id: 'R1' }]);
  });

  it('an order whose extra member `order` is an object is still the order, and the wrapper still unwraps', () => {
    const uuid = '00000000-0000-4000-8000-000000000002';
    const own = { orders: [{ uuid, state: 'created', order: { note: 'first of three' } }] };
    expect(parseOrdersPage(own)).toEqual([{ uuid, state: 'created' }]);
    const wrapped = { orders: [{ order: { uuid, state: 'created', external_reference_id: null } }] };
    expect(parseOrdersPage(wrapped)).toEqual([{ uuid, state: 'created', external_reference_id: null }]);
    // The schema's path (a page the fast path does not take: a state that needs the schema's words) agrees.
    expect(() => parseOrdersPage({ orders: [{ uuid, state: '', order: null }] })).toThrow();
  });
});
