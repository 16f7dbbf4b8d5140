-- Whether this role may create or drop indexes of the queue table (its owner
-- or a superuser), and the schema the table lives in (its indexes live there).
SELECT coalesce(r.rolsuper OR pg_has_role(c.relowner, 'USAGE'), false) AS may_index,
    n.nspname::text AS schema
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_roles r ON r.rolname = current_user
WHERE c.oid = to_regclass(%(table)s)
