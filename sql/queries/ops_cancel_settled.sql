-- How the running jobs a cancel asked to stop stand now: status, and for one
-- still running its worker's host and pid (the in-flight view's verdict).
SELECT r.task_id, r.task_status, i.worker_host, i.worker_pid
FROM sk_task_results_t r
LEFT JOIN sk_inflight_tasks(%(unowned_s)s) i ON i.task_id = r.task_id AND r.task_status = 2
WHERE r.task_id = ANY(%(ids)s::uuid[])
