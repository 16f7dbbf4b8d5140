-- End one earlier session of this worker (a claim whose answer was lost may
-- still be running in it) and say whether it is gone for sure. Matched by pid
-- and start time, so a recycled pid is never hit; waits up to 5 s for the exit.
WITH t AS (
    SELECT pg_terminate_backend(a.pid, 5000) AS ended
    FROM pg_stat_activity a
    WHERE a.pid = %(pid)s AND a.backend_start = %(started)s
)
SELECT coalesce(bool_and(t.ended), true) FROM t
