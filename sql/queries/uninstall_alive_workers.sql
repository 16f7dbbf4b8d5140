-- The registered workers whose lease has not lapsed (schema uninstall refuses
-- while any run).
SELECT w.worker_host || ' pid ' || w.worker_pid
FROM sk_workers_t w
JOIN sk_worker_liveness() l ON l.worker_id = w.worker_id
WHERE NOT l.lease_lapsed AND w.worker_stopped_at_ts IS NULL
ORDER BY w.worker_started_at_ts
