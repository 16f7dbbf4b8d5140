-- Workers that stopped (or died) long ago and own no in-flight job.
DELETE FROM sk_workers_t w
WHERE coalesce(w.worker_stopped_at_ts, w.worker_heartbeat_at_ts) < now() - %(after_s)s * interval '1 second'
    AND NOT EXISTS (
        SELECT 1 FROM sk_task_results_t r
        WHERE r.task_status = 2 AND r.sk_owner_worker_id = w.worker_id)
