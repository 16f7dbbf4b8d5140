-- One session, and whether it holds up the queue: the one definition that the cancel-session
-- preview shows and that the cancel re-checks in this very statement. With %(cancel)s true,
-- pg_cancel_backend runs here, and only if the session still qualifies and is still the
-- backend the preview showed (pid AND backend_start: a pid is reused once its session ends);
-- `cancelled` says whether it ran and worked, the other columns say why (not).
--
-- A session holds up the queue (`eligible`) when it is a session of this database and
--  * it blocks (`blocks`: the waiters) a session of this database waiting for a lock on a
--    queue table (%(tables)s, as to_regclass reads them): a lock on the table itself, or a
--    row lock (the waiter holds the tuple lock of a queue row and waits for its holder's
--    transaction); or
--  * it holds the xmin horizon (`holds_horizon`: its snapshot or transaction id is the oldest
--    of this database's sessions), its transaction has been open for %(horizon_s)s or longer,
--    and the queue tables have dead rows (statistics: n_dead_tup) that vacuum must keep while
--    it holds them back. (The statistics cannot tell those from older dead rows vacuum has
--    not reached yet; a cancel then costs one statement, and vacuum will say.)
-- A session of another database is out of reach whatever it does: its locks and its
-- snapshot are that database's business, not this queue's.
WITH here AS (
    SELECT d.oid FROM pg_database d WHERE d.datname = current_database()
),
queue AS (
    SELECT c.oid, coalesce(st.n_dead_tup, 0) AS dead
    FROM unnest(%(tables)s::text[]) AS t(name)
    JOIN pg_class c ON c.oid = to_regclass(t.name)
    LEFT JOIN pg_stat_user_tables st ON st.relid = c.oid
),
waiting AS (
    SELECT DISTINCT w.pid
    FROM pg_locks w
    WHERE NOT w.granted
      AND w.pid <> pg_backend_pid()
      AND (
          (w.database = (SELECT oid FROM here) AND w.relation IN (SELECT oid FROM queue))
          OR (w.locktype = 'transactionid' AND EXISTS (
              SELECT 1 FROM pg_locks t
              WHERE t.pid = w.pid AND t.locktype = 'tuple' AND t.granted
                AND t.database = (SELECT oid FROM here)
                AND t.relation IN (SELECT oid FROM queue)
          ))
      )
),
s AS (
    SELECT a.*,
        greatest(age(a.backend_xmin), age(a.backend_xid)) AS held,
        a.datname IS NOT DISTINCT FROM current_database() AS same_database
    FROM pg_stat_activity a
    WHERE a.pid = %(pid)s AND a.pid <> pg_backend_pid()
),
facts AS (
    SELECT s.pid,
        s.usename::text AS user,
        s.application_name AS application,
        s.client_addr::text AS client,
        s.datname::text AS database,
        current_database()::text AS queue_database,
        s.same_database,
        s.state,
        s.backend_start,
        extract(epoch FROM now() - s.xact_start)::float8 AS xact_age_s,
        s.held::bigint AS horizon_age,
        left(s.query, %(query_cap)s) AS query,
        ARRAY(
            SELECT w.pid FROM waiting w
            WHERE s.pid = ANY(pg_blocking_pids(w.pid))
            ORDER BY w.pid
        ) AS blocks,
        coalesce(s.same_database AND s.held IS NOT NULL AND s.held >= (
            SELECT max(greatest(age(o.backend_xmin), age(o.backend_xid)))
            FROM pg_stat_activity o
            WHERE o.datname = current_database() AND o.pid <> pg_backend_pid()
              AND o.backend_type IS DISTINCT FROM 'autovacuum worker'
        ), false) AS holds_horizon,
        (SELECT coalesce(sum(q.dead), 0) FROM queue q)::bigint AS dead_rows,
        %(horizon_s)s::float8 AS horizon_threshold_s
    FROM s
),
judged AS (
    SELECT f.*,
        coalesce(f.same_database AND (
            cardinality(f.blocks) > 0
            OR (f.holds_horizon AND f.xact_age_s >= f.horizon_threshold_s AND f.dead_rows > 0)
        ), false) AS eligible,
        f.backend_start = %(backend_start)s::timestamptz AS same_backend
    FROM facts f
)
SELECT j.*,
    CASE WHEN %(cancel)s::boolean AND j.eligible AND j.same_backend
        THEN pg_cancel_backend(j.pid)
        ELSE false
    END AS cancelled
FROM judged j
