-- The registered workers that are not stopped or gone, each with its liveness
-- (sk_worker_liveness()) and whether it runs the given type: the types a worker
-- claims are recorded when it registers (worker_task_types), and listed: a worker
-- that runs several types claims across them in one order.
SELECT w.worker_id, w.worker_host AS host, w.worker_pid AS pid, l.state,
    %(task_type)s::text = ANY(w.worker_task_types::text[]) AS runs_type,
    w.worker_task_types::text[] AS types
FROM sk_workers_t w
JOIN sk_worker_liveness() l ON l.worker_id = w.worker_id
WHERE w.worker_stopped_at_ts IS NULL
ORDER BY w.worker_started_at_ts DESC
