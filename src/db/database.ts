import postgres, { type Sql } from 'postgres';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import * as schema from '../ledger/schema/index.js';
import type { Logger } from '../log/logger.js';
import { startEmbeddedPostgres } from './embedded.js';

export type LedgerDb = PostgresJsDatabase<typeof schema>;

export interface Database {
  /** postgres.js client: tagged templates for hand-written set-based SQL. */
  sql: Sql;
  /** drizzle over the same pool, for typed queries. */
  db: LedgerDb;
  /** True when this process started the server itself (no DATABASE_URL). */
  embedded: boolean;
  /** Where it is; only set for an embedded server, whose address is chosen at start. */
  embeddedUrl?: string;
  close(timeoutSeconds?: number): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolMax: number;
  applicationName?: string;
  log: Logger;
}

export function createSqlClient(url: string, options: { poolMax: number; applicationName?: string }): Sql {
  return postgres(url, {
    max: options.poolMax,
    // Short connect timeout: the webhook receiver must answer 503 well inside the provider's 5 s.
    connect_timeout: 2,
    idle_timeout: 60,
    max_lifetime: 60 * 30,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'bnpl-recon' },
  });
}

/** Opens the ledger: the server at DATABASE_URL, or an embedded one started under the data dir. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  let url = options.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (url === undefined) {
    const server = await startEmbeddedPostgres(options.dataDir, options.log);
    url = server.url;
    stopEmbedded = server.stop;
  }
  const sql = createSqlClient(url, { poolMax: options.poolMax, ...(options.applicationName ? { applicationName: options.applicationName } : {}) });
  const db = drizzle(sql, { schema });
  let closing: Promise<void> | undefined;
  return {
    sql,
    db,
    embedded: stopEmbedded !== undefined,
    ...(stopEmbedded ? { embeddedUrl: url } : {}),
    close(timeoutSeconds = 5) {
      closing ??= (async () => {
        await sql.end({ timeout: timeoutSeconds });
        if (stopEmbedded) await stopEmbedded();
      })();
      return closing;
    },
  };
}
