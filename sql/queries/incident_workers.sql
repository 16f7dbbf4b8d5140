-- The workers registered while %(since)s to %(until)s lasted (started before its
-- end, last heard of, or stopped, after its start) and not forgotten since
-- (forget_old_workers.sql forgets them a day after they went): an incident
-- bundle's workers.
SELECT w.worker_id, w.worker_process_id AS process_id, w.worker_host AS host,
    w.worker_pid AS pid, w.worker_task_types::text[] AS task_types,
    w.worker_started_at_ts AS started_at, w.worker_heartbeat_at_ts AS heartbeat_at,
    w.worker_stopped_at_ts AS stopped_at, w.worker_app_version::text AS app_version
FROM sk_workers_t w
WHERE w.worker_started_at_ts < %(until)s
    AND coalesce(w.worker_stopped_at_ts, w.worker_heartbeat_at_ts) >= %(since)s
ORDER BY w.worker_started_at_ts, w.worker_id
