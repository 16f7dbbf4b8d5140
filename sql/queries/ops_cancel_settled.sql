-- How the running jobs a cancel asked to stop stand now: status, the claim of
-- the attempt running now (a new one: the job was posted again for a keyed
-- re-post, which takes precedence over the cancel), and for one still running
-- its worker's host and pid (the in-flight view's verdict).
SELECT r.task_id, r.task_status AS status, i.worker_host, i.worker_pid, r.sk_claim_id AS claim_id
FROM sk_task_results_t r
LEFT JOIN sk_inflight_tasks(%(unowned_s)s) i ON i.task_id = r.task_id AND r.task_status = 2
WHERE r.task_id = ANY(%(ids)s::uuid[])
