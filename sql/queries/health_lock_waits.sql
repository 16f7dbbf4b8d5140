-- Sessions waiting for a lock on one of the hot tables, longest wait first, with who blocks
-- them (pg_blocking_pids). A row lock wait (SELECT ... FOR UPDATE, UPDATE, DELETE) is a wait
-- on the holder's transaction id; its table is that of the tuple lock the waiter holds.
WITH waits AS (
    SELECT w.pid, w.locktype, w.mode, w.waitstart,
        coalesce(
            w.relation,
            (SELECT t.relation FROM pg_locks t
             WHERE t.pid = w.pid AND t.locktype = 'tuple' AND t.granted
             LIMIT 1)
        ) AS relation
    FROM pg_locks w
    WHERE NOT w.granted AND w.pid <> pg_backend_pid()
)
SELECT w.pid,
    a.usename::text,
    a.application_name,
    left(a.query, %(query_cap)s),
    extract(epoch FROM clock_timestamp() - w.waitstart)::float8,
    w.locktype,
    w.mode,
    c.relname::text,
    pg_blocking_pids(w.pid)
FROM waits w
JOIN pg_class c ON c.oid = w.relation
LEFT JOIN pg_stat_activity a ON a.pid = w.pid
WHERE c.oid IN (SELECT to_regclass(t) FROM unnest(%(tables)s::text[]) t)
ORDER BY w.waitstart NULLS LAST, w.pid
LIMIT %(limit)s
