import { describe, expect, it } from 'vitest';
import { databaseUrlProblem, describeDatabaseUrl, formatDatabaseUrl, parseDatabaseUrl } from '../../src/db/database-url.js';

describe('DATABASE_URL with one host or several', () => {
  it('reads several hosts in order, keeps the query, describes without the password', () => {
    const url = 'postgres://bnpl:pw@db-a:5432,db-b:6432/ledger?target_session_attrs=read-write&sslmode=require';
    const parsed = parseDatabaseUrl(url)!;
    expect(parsed.hosts).toEqual(['db-a:5432', 'db-b:6432']);
    expect(parsed.params.get('target_session_attrs')).toBe('read-write');
    expect(formatDatabaseUrl(parsed, ['db-b:6432', 'db-a:5432'])).toBe('postgres://bnpl:pw@db-b:6432,db-a:5432/ledger?target_session_attrs=read-write&sslmode=require');
    expect(describeDatabaseUrl(url)).toBe('db-a:5432,db-b:6432/ledger');
    expect(databaseUrlProblem(url)).toBeUndefined();
    expect(databaseUrlProblem('postgresql://ledger-rw.bnpl.svc/ledger')).toBeUndefined();
  });

  it('refuses what is not a postgres URL, an empty or bad host, and a session kind that cannot write', () => {
    expect(databaseUrlProblem('mysql://u@h/db')).toMatch(/not a postgres/);
    expect(databaseUrlProblem('postgres://u@h1:5432,/db')).toMatch(/not a postgres/);
    expect(databaseUrlProblem('postgres://u@h1:x/db')).toMatch(/not a postgres/);
    expect(databaseUrlProblem('postgres://u@h1,h2/db?target_session_attrs=standby')).toMatch(/only read-write, primary or any/);
  });
});
