-- Sessions of this database that may hold back the xmin horizon or hold locks: those with a
-- snapshot (backend_xmin) or a transaction id (backend_xid), those idle in a transaction, and
-- the sessions named in %(pids)s (who blocks a lock wait). Oldest first. Without
-- pg_read_all_stats, another role's session shows pid, user, application and xid/xmin only:
-- its query reads '<insufficient privilege>' and its state, times and client are NULL.
-- Vacuum workers and this session are left out: the horizon ignores the former.
SELECT a.pid,
    a.usename::text AS user,
    a.application_name AS application,
    a.client_addr::text AS client,
    a.state,
    a.backend_type,
    a.backend_start,
    extract(epoch FROM now() - a.xact_start)::float8 AS xact_age_s,
    age(a.backend_xmin)::bigint AS xmin_age,
    age(a.backend_xid)::bigint AS xid_age,
    left(a.query, %(query_cap)s) AS query,
    nullif(concat_ws(':', a.wait_event_type, a.wait_event), '') AS wait_event,
    a.query IS DISTINCT FROM '<insufficient privilege>' AS visible
FROM pg_stat_activity a
WHERE a.pid <> pg_backend_pid()
  AND a.backend_type IS DISTINCT FROM 'autovacuum worker'
  AND (
      (a.datname = current_database()
       AND (a.backend_xmin IS NOT NULL
            OR a.backend_xid IS NOT NULL
            OR a.state LIKE 'idle in transaction%%'))
      OR a.pid = ANY(%(pids)s::int[])
  )
-- the blockers first, so the limit never leaves one out
ORDER BY a.pid = ANY(%(pids)s::int[]) DESC,
    greatest(age(a.backend_xmin), age(a.backend_xid)) DESC NULLS LAST,
    a.xact_start NULLS LAST
LIMIT %(limit)s
