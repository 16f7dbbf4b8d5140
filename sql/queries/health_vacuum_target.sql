-- One hot table as VACUUM would find it: its tuples and size, when it was last vacuumed,
-- whether a vacuum runs on it now, and whether this role may vacuum it (VACUUM only warns
-- and skips a table its role may not vacuum: owner, superuser, or on PG 17 and later
-- pg_maintain or the table's own MAINTAIN privilege, a name older servers do not know).
SELECT c.relname::text AS table,
    coalesce(s.n_live_tup, 0) AS live_rows,
    coalesce(s.n_dead_tup, 0) AS dead_rows,
    pg_table_size(c.oid) AS table_bytes,
    greatest(s.last_vacuum, s.last_autovacuum) AS last_vacuumed,
    EXISTS (SELECT 1 FROM pg_stat_progress_vacuum p WHERE p.relid = c.oid) AS vacuum_running,
    r.rolsuper
        OR pg_has_role(c.relowner, 'USAGE')
        OR EXISTS (
            SELECT 1 FROM pg_roles m
            WHERE m.rolname = 'pg_maintain' AND pg_has_role(m.oid, 'USAGE')
        )
        OR CASE WHEN current_setting('server_version_num')::integer >= 170000
            THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END AS may_vacuum
FROM pg_class c
JOIN pg_roles r ON r.rolname = current_user
LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
WHERE c.oid = to_regclass(%(table)s)
