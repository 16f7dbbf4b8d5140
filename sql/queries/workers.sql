-- Registered workers with liveness (the advisory lock) and in-flight counts.
SELECT w.worker_id, w.worker_process_id, w.worker_host, w.worker_pid, w.worker_concurrency,
    w.worker_task_types, w.worker_started_at_ts,
    extract(epoch FROM now() - w.worker_heartbeat_at_ts) AS heartbeat_age_s,
    w.worker_stopped_at_ts IS NOT NULL AS stopped,
    EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND ((l.classid::bigint << 32) | l.objid::bigint) = w.worker_lock_key
    ) AS alive,
    (SELECT count(*) FROM sk_task_results_t r
        WHERE r.task_status = 2 AND r.sk_owner_worker_id = w.worker_id) AS in_flight
FROM sk_workers_t w
ORDER BY w.worker_started_at_ts DESC
