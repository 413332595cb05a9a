import { afterAll, describe, expect, it } from 'vitest';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { json, Loopback, makeContext } from '../poller/loopback-provider.js';

/**
 * Review (spec conformance), provider-api.md "Endpoints":
 *   | GET | /api/v1/orders | headers Api-Token and Content-Type: application/json | orders (body shape below) |
 *   "Order response shape: an object with a key order holding uuid, state, external_reference_id."
 *   "The order response is wrapped in an object with the single key order."
 * The only body shape the document gives for GET /api/v1/orders is {"order": {...}}. The client reads
 * {"orders": [...]}, a bare array, and {"order": {...}} as an element of those, but refuses the
 * documented body itself as "an unexpected shape", so a poll against a provider that answers as
 * documented fails every time.
 */
let database: TestDatabase;
useTestDatabase('review_spec_orders_shape', (d) => (database = d));

const servers: Loopback[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

describe('GET /api/v1/orders answered with the documented body shape', () => {
  it('reads {"order": {uuid, state, external_reference_id}} as one order', async () => {
    const seen: { path: string; token: string | undefined; contentType: string | undefined }[] = [];
    const server = new Loopback((req, res, url) => {
      seen.push({ path: url.pathname, token: req.headers['api-token'] as string | undefined, contentType: req.headers['content-type'] });
      json(res, 200, { order: { uuid: '7c9e6679-7425-40de-944b-e07fc1f90ae7', state: 'confirmed', external_reference_id: 'SO-2024-0001' } });
    });
    servers.push(server);
    const url = await server.listen();
    const { client } = makeContext(database, url);
    try {
      let outcome: unknown;
      try {
        outcome = (await client.getOrdersPage(1, 100)).orders;
      } catch (error) {
        outcome = `refused: ${(error as Error).message}`;
      }
      expect(seen[0]).toMatchObject({ path: '/api/v1/orders', contentType: 'application/json' });
      expect(seen[0]?.token, 'Api-Token header').toBeTruthy();
      expect(outcome, 'the documented order response body').toEqual([{ uuid: '7c9e6679-7425-40de-944b-e07fc1f90ae7', state: 'confirmed', external_reference_id: 'SO-2024-0001' }]);
    } finally {
      await client.close();
    }
  });
});
