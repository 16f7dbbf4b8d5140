-- Sessions waiting for a lock on one of the hot tables, longest wait first, with who blocks
-- them (pg_blocking_pids). A row lock wait (SELECT ... FOR UPDATE, UPDATE, DELETE) is a wait
-- on the holder's transaction id; its table is that of the tuple lock the waiter holds.
-- Only this database's locks: a relation oid of another database names another table
-- (health_session_target.sql reads the waits the same way).
WITH here AS (
    SELECT d.oid FROM pg_database d WHERE d.datname = current_database()
),
waits AS (
    SELECT w.pid, w.locktype, w.mode, w.waitstart,
        CASE
            WHEN w.relation IS NOT NULL THEN
                CASE WHEN w.database = (SELECT oid FROM here) THEN w.relation END
            ELSE (SELECT t.relation FROM pg_locks t
                  WHERE t.pid = w.pid AND t.locktype = 'tuple' AND t.granted
                    AND t.database = (SELECT oid FROM here)
                  LIMIT 1)
        END AS relation
    FROM pg_locks w
    WHERE NOT w.granted AND w.pid <> pg_backend_pid()
)
SELECT w.pid,
    a.usename::text AS user,
    a.application_name AS application,
    left(a.query, %(query_cap)s) AS query,
    extract(epoch FROM clock_timestamp() - w.waitstart)::float8 AS waited_s,
    w.locktype AS lock_type,
    w.mode,
    c.relname::text AS table,
    pg_blocking_pids(w.pid) AS blocked_by
FROM waits w
JOIN pg_class c ON c.oid = w.relation
LEFT JOIN pg_stat_activity a ON a.pid = w.pid
WHERE c.oid IN (SELECT to_regclass(t) FROM unnest(%(tables)s::text[]) t)
ORDER BY w.waitstart NULLS LAST, w.pid
LIMIT %(limit)s
