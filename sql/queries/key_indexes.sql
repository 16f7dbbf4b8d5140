-- The key indexes of one task type's per-key limit (ops/key_index.py, named
-- sk_key_*, partial on the type; their comment records the type and path as
-- JSON), on the queue table: whether each is valid (a failed CREATE INDEX
-- CONCURRENTLY leaves an invalid one), the schema it lives in (its table's)
-- and whether this role may create or drop such indexes (the table's owner
-- or a superuser).
SELECT i.relname::text AS index, n.nspname::text AS schema, x.indisvalid AS valid,
    sk_try_jsonb(obj_description(i.oid, 'pg_class')) ->> 'path' AS path
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_namespace n ON n.oid = i.relnamespace
WHERE x.indrelid = to_regclass(%(table)s) AND i.relname LIKE 'sk\_key\_%%'
    AND sk_try_jsonb(obj_description(i.oid, 'pg_class')) ->> 'task_type' = %(task_type)s
ORDER BY i.relname
