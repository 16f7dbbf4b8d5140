INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,
    worker_concurrency, worker_task_types)
VALUES (%(worker_id)s, %(process_id)s, %(host)s, %(pid)s, %(concurrency)s, %(types)s)
RETURNING worker_lock_key
