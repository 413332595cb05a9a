-- Statement lines and entries are written without a foreign key check on their statement: the
-- import writes them in the transaction that inserts their bank_statements row, by that row's id,
-- and copies them in bulk (src/db/copy.ts); the key's per-row lookup and lock of the
-- statement cost about a third of each stored line's insert (bench/README.md, statements). What
-- the key also guaranteed, that no statement is deleted from under its lines, the trigger below
-- keeps: an imported statement is evidence and is never deleted. Expand: the release before writes
-- the same rows and deletes no statement.
ALTER TABLE "statement_entries" DROP CONSTRAINT "statement_entries_statement_id_bank_statements_id_fk";
--> statement-breakpoint
ALTER TABLE "statement_lines" DROP CONSTRAINT "statement_lines_statement_id_bank_statements_id_fk";
--> statement-breakpoint
CREATE FUNCTION bank_statements_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'bank statement % is kept: its lines and entries name it, and an imported statement is never deleted', OLD.id
    USING ERRCODE = 'restrict_violation';
END
$$;
--> statement-breakpoint
CREATE TRIGGER bank_statements_kept BEFORE DELETE ON "bank_statements" FOR EACH ROW EXECUTE FUNCTION bank_statements_kept();
