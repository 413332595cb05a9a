-- Expand only (a data fill, no schema change). Migration 0013 added first_whole_day and
-- last_whole_day to statement_periods without filling them for the periods stored before it, so the
-- overlap rules (src/statements/overlap.ts) took such a statement as covering no day, and a later
-- statement repeating its bookings stored them a second time. Filled here as the import writes them
-- (src/statements/line-key.ts wholeDays, camt053.ts): a period's instants are the bank's wall clock
-- written in UTC; a first day counts whole from its midnight, else from the next day; a last day
-- whole when the period ends at the next midnight (MT940, CSV, CAMT dates) or at 23:59:59 or later,
-- else it ends the day before.
UPDATE "statement_periods" p
SET "first_whole_day" = CASE WHEN (p."period_from" AT TIME ZONE 'UTC')::time = '00:00:00'
                             THEN (p."period_from" AT TIME ZONE 'UTC')::date
                             ELSE (p."period_from" AT TIME ZONE 'UTC')::date + 1 END,
    "last_whole_day" = CASE WHEN (p."period_to" AT TIME ZONE 'UTC')::time = '00:00:00'
                            THEN (p."period_to" AT TIME ZONE 'UTC')::date - 1
                            WHEN (p."period_to" AT TIME ZONE 'UTC')::time >= '23:59:59'
                            THEN (p."period_to" AT TIME ZONE 'UTC')::date
                            ELSE (p."period_to" AT TIME ZONE 'UTC')::date - 1 END
WHERE p."first_whole_day" IS NULL AND p."last_whole_day" IS NULL
  AND p."period_from" IS NOT NULL AND p."period_to" IS NOT NULL;
