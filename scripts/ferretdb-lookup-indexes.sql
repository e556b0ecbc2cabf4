-- Lookup indexes FerretDB v1 can use, for the local MongoDB-wire server (scripts/infra.sh and the
-- chaos suite apply this to FerretDB's PostgreSQL database; production runs MongoDB, which needs
-- none of it).
--
-- Why: FerretDB v1.24 pushes an equality filter such as {_id: "task_…"} down to PostgreSQL as
-- `_jsonb -> '_id' @> '"task_…"'`, but it indexes fields with btree indexes on `(_jsonb -> '_id')`,
-- and a btree cannot serve `@>`. So every find, update and delete by _id read the whole table
-- (EXPLAIN showed a Seq Scan; FerretDB issue #4646): the cost of a task grew with the number of
-- tasks stored. A GIN index on the same expression serves `@>`.
--
-- How: an event trigger gives every new FerretDB table (a `_jsonb` column) a GIN index on `_id`,
-- and every btree index FerretDB creates for a collection index a GIN twin on its first field.
-- Idempotent: safe to apply on every start.

SET client_min_messages = warning;

CREATE OR REPLACE FUNCTION tes_ferretdb_lookup_indexes() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
  cmd record;
  tbl regclass;
  expr text;
BEGIN
  FOR cmd IN SELECT * FROM pg_event_trigger_ddl_commands() LOOP
    IF cmd.command_tag = 'CREATE TABLE' THEN
      tbl := cmd.objid::regclass;
      CONTINUE WHEN NOT EXISTS (
        SELECT 1 FROM pg_attribute WHERE attrelid = tbl AND attname = '_jsonb' AND NOT attisdropped);
      expr := '(_jsonb -> ''_id''::text)';
    ELSIF cmd.command_tag = 'CREATE INDEX' THEN
      -- Only FerretDB's btree indexes on a document field; the GIN ones made here end the recursion.
      SELECT i.indrelid::regclass, pg_get_indexdef(i.indexrelid, 1, true)
        INTO tbl, expr
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
        WHERE i.indexrelid = cmd.objid AND am.amname = 'btree';
      CONTINUE WHEN tbl IS NULL OR expr NOT LIKE '(_jsonb -> %' OR expr LIKE '(_jsonb -> ''\_id''%';
    ELSE
      CONTINUE;
    END IF;
    -- fastupdate off: each insert updates the index at once, instead of a pending list whose
    -- periodic merge would land on one unlucky write.
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s USING gin (%s) WITH (fastupdate = off)',
      'tesgin_' || left(md5(tbl::text || expr), 24), tbl, expr);
  END LOOP;
END
$$;

DROP EVENT TRIGGER IF EXISTS tes_ferretdb_lookup_indexes;
CREATE EVENT TRIGGER tes_ferretdb_lookup_indexes ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'CREATE INDEX')
  EXECUTE FUNCTION tes_ferretdb_lookup_indexes();
