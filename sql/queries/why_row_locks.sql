-- Who holds a row lock on one job's queue row or result row. A row lock is not
-- in pg_locks (only its waiters are): it is the locker's transaction id in the
-- row's xmax, so the holder is the session whose backend_xid it is (a lock taken
-- by several sessions at once is a multixact and is not matched here). Claims
-- skip a locked queue row (SKIP LOCKED) and results wait for the result row.
-- pg_blocking_pids names who waits behind the holder.
WITH locked AS (
    SELECT 'queue' AS row_of, q.xmax AS xid FROM sk_tasks_queue_t q WHERE q.task_id = %(task_id)s::uuid
    UNION ALL
    SELECT 'result', r.xmax FROM sk_task_results_t r WHERE r.task_id = %(task_id)s::uuid
)
SELECT l.row_of, a.pid, a.application_name AS application, a.state,
    extract(epoch FROM clock_timestamp() - a.xact_start)::float8 AS xact_age_s,
    left(a.query, %(query_cap)s) AS query,
    ARRAY(SELECT b.pid FROM pg_stat_activity b WHERE a.pid = ANY(pg_blocking_pids(b.pid))
          ORDER BY b.pid) AS waiting
FROM locked l
JOIN pg_stat_activity a ON a.backend_xid = l.xid
WHERE l.xid <> '0'::xid AND a.pid <> pg_backend_pid()
    AND a.datname = current_database()
ORDER BY l.row_of, a.pid
