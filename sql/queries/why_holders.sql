-- The jobs of one type holding its concurrency slots (2 Processing), longest
-- running first, with the worker that runs each when it is registered.
SELECT r.task_id, r.task_last_processing_attempted_at_ts AS started_at,
    extract(epoch FROM now() - r.task_last_processing_attempted_at_ts)::float8 AS running_s,
    w.worker_host AS host, w.worker_pid AS pid
FROM sk_task_results_t r
LEFT JOIN sk_workers_t w ON w.worker_id = r.sk_owner_worker_id
WHERE r.task_status = 2 AND r.task_type = %(task_type)s::text
ORDER BY r.task_last_processing_attempted_at_ts NULLS LAST, r.task_id
LIMIT %(limit)s
