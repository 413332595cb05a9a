-- Expand only (docs/upgrading.md): a nullable column. Files imported before it keep null, the
-- older key form (src/statements/line-key.ts); a release before it, during a rolling update,
-- writes null too, and its keys are the older form.
ALTER TABLE "bank_statements" ADD COLUMN "key_format" smallint;
