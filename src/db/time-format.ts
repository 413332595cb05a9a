/**
 * The `to_char` patterns of timestamps leaving the database as text, always `at time zone 'UTC'`:
 * evidence and API details keep the microseconds Postgres stores (two events a microsecond apart
 * stay apart); reports give the second, as CONTRACT.md's report format says.
 */
export const SQL_ISO_MICROSECONDS = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';
export const SQL_ISO_SECONDS = 'YYYY-MM-DD"T"HH24:MI:SS"Z"';
