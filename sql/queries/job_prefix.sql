-- The jobs whose id starts with a prefix: a range of the primary keys (the
-- prefix padded with 0s to with fs, both inclusive), so it stays an index
-- range scan on any number of results; the first few only. A queue row posted
-- by hand, with no result row, is found too (as 1 Unprocessed).
SELECT x.task_id, x.task_type, x.status, x.posted_at FROM (
    (SELECT r.task_id, r.task_type::text AS task_type, r.task_status AS status,
         r.task_posted_at_ts AS posted_at
     FROM sk_task_results_t r
     WHERE r.task_id >= %(low)s::uuid AND r.task_id <= %(high)s::uuid
     ORDER BY r.task_id
     LIMIT %(limit)s)
    UNION ALL
    (SELECT q.task_id, q.task_type::text, 1, q.task_posted_at_ts
     FROM sk_tasks_queue_t q
     WHERE q.task_id >= %(low)s::uuid AND q.task_id <= %(high)s::uuid
         AND NOT EXISTS (SELECT 1 FROM sk_task_results_t r WHERE r.task_id = q.task_id)
     ORDER BY q.task_id
     LIMIT %(limit)s)
) AS x
ORDER BY x.task_id
LIMIT %(limit)s
