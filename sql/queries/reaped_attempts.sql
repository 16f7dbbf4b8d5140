-- The reaped attempts (sk_attempts_t, outcome 'reaped': reap.sql records them,
-- whoever reaped, a live worker's reaper or an operator) of the given jobs that
-- ended within the last %(within_s)s seconds, by the attempts' primary key: the
-- console asks it of the jobs that left its in-flight list since its last read.
-- The worker is the one whose attempt was reaped, as it had registered.
SELECT a.task_id, a.ended_at_ts AS reaped_at, a.worker_host AS host, a.worker_pid AS pid,
    a.status
FROM sk_attempts_t a
WHERE a.task_id = ANY(%(ids)s::uuid[])
    AND a.outcome = 'reaped'
    AND a.ended_at_ts > now() - make_interval(secs => %(within_s)s)
ORDER BY a.ended_at_ts DESC, a.task_id
