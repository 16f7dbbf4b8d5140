-- Every recorded attempt of one job (sk_attempts_t, by its primary key), oldest
-- first, and the attempt running now, read from the result row (an attempt is
-- recorded when it ends): only when a worker of ours claimed it (a .NET
-- consumer's attempts are not numbered).
SELECT a.attempt, a.started_at_ts AS started_at, a.ended_at_ts AS ended_at, a.worker_id,
    a.worker_host AS host, a.worker_pid AS pid, a.app_version, a.outcome, a.status, a.error
FROM sk_attempts_t a
WHERE a.task_id = %(task_id)s
UNION ALL
SELECT r.sk_attempt, r.task_last_processing_attempted_at_ts, NULL::timestamptz,
    r.sk_owner_worker_id, w.worker_host, w.worker_pid, w.worker_app_version, 'running',
    r.task_status, NULL::text
FROM sk_task_results_t r
LEFT JOIN sk_workers_t w ON w.worker_id = r.sk_owner_worker_id
WHERE r.task_id = %(task_id)s AND r.task_status = 2 AND r.sk_owner_worker_id IS NOT NULL
ORDER BY attempt
