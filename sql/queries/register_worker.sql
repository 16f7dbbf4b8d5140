-- Register this worker process, the lease it runs under, the periodic types
-- it schedules and the version of the application code it runs; its lock key
-- is the second key of its liveness lock (two-key form, class sk_lock_class()).
-- With it, the timeline the database is on (as heartbeat.sql). session_lock:
-- whether the worker holds that lock (not behind a transaction pooler).
WITH registered AS (
    INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,
        worker_concurrency, worker_task_types, worker_lease_seconds, worker_lease_margin_seconds,
        worker_schedules, worker_app_version, worker_session_lock)
    VALUES (%(worker_id)s, %(process_id)s, %(host)s, %(pid)s, %(concurrency)s, %(types)s,
        %(lease_s)s, %(margin_s)s, %(schedules)s, %(app_version)s, %(session_lock)s)
    ON CONFLICT (worker_id) DO UPDATE SET worker_heartbeat_at_ts = now(), worker_stopped_at_ts = NULL,
        worker_session_lock = EXCLUDED.worker_session_lock
    RETURNING worker_lock_key
)
SELECT r.worker_lock_key AS lock_key, s.timeline, s.held_until
FROM registered r CROSS JOIN sk_timeline_state(%(lease_s)s + %(margin_s)s) s
