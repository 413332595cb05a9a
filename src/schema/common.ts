import { pgEnum } from 'drizzle-orm/pg-core';

/** One daemon serves one provider environment; every ledger row carries the one it came from. */
export const providerEnvironment = pgEnum('provider_environment', ['sandbox', 'production']);
