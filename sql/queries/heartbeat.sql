-- Renew this worker's lease. No row: the registration is gone (deleted by
-- hand); the worker registers again. now() is the statement's start: never
-- later than the moment the worker sent it, which is what its own clock counts from.
UPDATE sk_workers_t SET worker_heartbeat_at_ts = now(), worker_stopped_at_ts = NULL
WHERE worker_id = %(worker_id)s
RETURNING worker_lock_key
