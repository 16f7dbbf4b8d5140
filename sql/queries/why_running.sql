-- A running job's attempt: how long it has run and its worker's liveness
-- (sk_worker_liveness(): the one definition of alive).
SELECT extract(epoch FROM now() - r.task_last_processing_attempted_at_ts)::float8 AS running_s,
    w.worker_id, w.worker_host AS host, w.worker_pid AS pid, l.state, l.note
FROM sk_task_results_t r
LEFT JOIN sk_workers_t w ON w.worker_id = r.sk_owner_worker_id
LEFT JOIN sk_worker_liveness() l ON l.worker_id = w.worker_id
WHERE r.task_id = %(task_id)s::uuid
