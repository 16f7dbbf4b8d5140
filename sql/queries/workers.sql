-- Registered workers with their liveness (sk_worker_liveness: lease and
-- control connection) and in-flight counts.
SELECT w.worker_id, w.worker_process_id AS process_id, w.worker_host AS host,
    w.worker_pid AS pid, w.worker_concurrency AS concurrency, w.worker_task_types AS task_types,
    w.worker_started_at_ts AS started_at, l.heartbeat_age_s, l.stopped, l.connected,
    (SELECT count(*) FROM sk_task_results_t r
        WHERE r.task_status = 2 AND r.sk_owner_worker_id = w.worker_id) AS in_flight,
    l.state, l.note, l.lease_s, w.worker_app_version AS app_version
FROM sk_workers_t w
JOIN sk_worker_liveness() l ON l.worker_id = w.worker_id
ORDER BY w.worker_started_at_ts DESC
