-- One session as the cancel-session action previews it: who it is, what it runs, the sessions
-- it blocks now (pg_blocking_pids of every waiter) and whether it holds this database's xmin
-- horizon (its snapshot or transaction id is the oldest of the database's sessions).
-- eligible: either (only then may it be cancelled). health_cancel_backend.sql decides the
-- same way: keep the two in step.
WITH s AS (
    SELECT a.*, greatest(age(a.backend_xmin), age(a.backend_xid)) AS held
    FROM pg_stat_activity a
    WHERE a.pid = %(pid)s AND a.pid <> pg_backend_pid()
)
SELECT t.*, cardinality(t.blocks) > 0 OR t.holds_horizon AS eligible
FROM (
    SELECT s.pid,
        s.usename::text AS user,
        s.application_name AS application,
        s.client_addr::text AS client,
        s.state,
        s.backend_start,
        extract(epoch FROM now() - s.xact_start)::float8 AS xact_age_s,
        s.held::bigint AS horizon_age,
        left(s.query, %(query_cap)s) AS query,
        ARRAY(
            SELECT b.pid FROM pg_stat_activity b
            WHERE s.pid = ANY(pg_blocking_pids(b.pid))
            ORDER BY b.pid
        ) AS blocks,
        s.datname IS NOT DISTINCT FROM current_database() AND s.held IS NOT NULL AND s.held >= (
            SELECT max(greatest(age(o.backend_xmin), age(o.backend_xid)))
            FROM pg_stat_activity o
            WHERE o.datname = current_database() AND o.pid <> pg_backend_pid()
              AND o.backend_type IS DISTINCT FROM 'autovacuum worker'
        ) AS holds_horizon
    FROM s
) t
