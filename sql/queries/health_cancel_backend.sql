-- Cancel the running statement of a session, only if it is still the backend the preview
-- showed (pid AND backend_start: a pid can be reused) and it still blocks a session or holds
-- this database's xmin horizon (the same rule as health_session_target.sql). No row: left
-- alone, as when pg_cancel_backend returns false (the session is gone); a role that may not
-- signal it gets an error (permission denied).
WITH s AS (
    SELECT a.pid, a.datname, greatest(age(a.backend_xmin), age(a.backend_xid)) AS held
    FROM pg_stat_activity a
    WHERE a.pid = %(pid)s
      AND a.backend_start = %(backend_start)s
      AND a.pid <> pg_backend_pid()
),
cancelled AS MATERIALIZED (
    SELECT s.pid, pg_cancel_backend(s.pid) AS cancelled
    FROM s
    WHERE EXISTS (
        SELECT 1 FROM pg_stat_activity b WHERE s.pid = ANY(pg_blocking_pids(b.pid))
    )
    OR (s.datname IS NOT DISTINCT FROM current_database() AND s.held IS NOT NULL AND s.held >= (
        SELECT max(greatest(age(o.backend_xmin), age(o.backend_xid)))
        FROM pg_stat_activity o
        WHERE o.datname = current_database() AND o.pid <> pg_backend_pid()
          AND o.backend_type IS DISTINCT FROM 'autovacuum worker'
    ))
)
SELECT pid, cancelled FROM cancelled WHERE cancelled
