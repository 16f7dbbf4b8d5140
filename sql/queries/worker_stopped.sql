UPDATE sk_workers_t SET worker_stopped_at_ts = now() WHERE worker_id = %(worker_id)s
