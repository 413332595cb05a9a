-- Expand only (a data fill, no schema change). Migration 0013 added first_whole_day and
-- last_whole_day to statement_periods without filling them for the periods stored before it, so the
-- overlap rules (src/statements/overlap.ts) took such a statement as covering no day, and a later
-- statement repeating its bookings stored them a second time. Filled here as the import writes them
-- (src/statements/line-key.ts wholeDays), only where the stored instants say it: MT940 and CSV
-- periods are whole bank days, their midnights written in UTC; a CAMT.053 period counts only when
-- it starts at a UTC midnight and ends at one or at 23:59:59 or later (FrDt/ToDt dates, FrDtTm/ToDtTm
-- without an offset, kept as the bank's wall clock). A CAMT.053 FrDtTm/ToDtTm with an offset was
-- stored as the real instant, its wall clock lost: its days stay unknown, as they were, rather than
-- claimed (claimed wrongly, a later statement's bookings on that day would not be stored).
UPDATE "statement_periods" p
SET "first_whole_day" = (p."period_from" AT TIME ZONE 'UTC')::date,
    "last_whole_day" = CASE WHEN (p."period_to" AT TIME ZONE 'UTC')::time = '00:00:00'
                            THEN (p."period_to" AT TIME ZONE 'UTC')::date - 1
                            ELSE (p."period_to" AT TIME ZONE 'UTC')::date END
WHERE p."first_whole_day" IS NULL AND p."last_whole_day" IS NULL
  AND p."period_from" IS NOT NULL AND p."period_to" IS NOT NULL
  AND (p."period_from" AT TIME ZONE 'UTC')::time = '00:00:00'
  AND ((p."period_to" AT TIME ZONE 'UTC')::time = '00:00:00' OR (p."period_to" AT TIME ZONE 'UTC')::time >= '23:59:59');
