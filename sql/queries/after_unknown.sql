-- The ids a post's after= names that are no job: neither a result row nor a
-- queue row (a few, for the error message). Read before anything is written.
SELECT x.after_id
FROM unnest(%(ids)s::uuid[]) AS x(after_id)
WHERE NOT EXISTS (SELECT 1 FROM sk_task_results_t r WHERE r.task_id = x.after_id)
    AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = x.after_id)
ORDER BY x.after_id
LIMIT 5
