/**
 * The embedded Postgres could not be started, stopped or reached. Its message is one line for a
 * person (what failed and what to do); the CLI prints it and exits 1.
 */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}
