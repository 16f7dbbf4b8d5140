-- The first jobs one job's success posted (its next stage, its ctx.post jobs),
-- on the parent index (idx_sk_task_results_parent); the count is job.sql's.
SELECT c.task_id, c.task_type, c.task_status AS status
FROM sk_task_results_t c
WHERE c.sk_parent_task_id = %(task_id)s
ORDER BY c.task_posted_at_ts, c.task_id
LIMIT %(limit)s
