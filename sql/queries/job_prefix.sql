-- The jobs whose id starts with a prefix: a range of the primary key (the
-- prefix padded with 0s to with fs, both inclusive), so it stays an index
-- range scan on any number of results; the first few only.
SELECT r.task_id, r.task_type, r.task_status AS status, r.task_posted_at_ts AS posted_at
FROM sk_task_results_t r
WHERE r.task_id >= %(low)s::uuid AND r.task_id <= %(high)s::uuid
ORDER BY r.task_id
LIMIT %(limit)s
