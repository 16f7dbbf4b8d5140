UPDATE sk_workers_t SET worker_heartbeat_at_ts = now(), worker_stopped_at_ts = NULL
WHERE worker_id = %(worker_id)s
