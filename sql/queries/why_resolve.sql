-- The jobs whose id starts with a prefix: the ids between the prefix padded
-- with zeros and with f's (a range the primary keys answer), in either table
-- (a queue row posted by hand has no result row). Two are enough to say the
-- prefix is not unique.
SELECT DISTINCT x.task_id FROM (
    (SELECT r.task_id FROM sk_task_results_t r
     WHERE r.task_id BETWEEN %(low)s::uuid AND %(high)s::uuid ORDER BY r.task_id LIMIT 2)
    UNION ALL
    (SELECT q.task_id FROM sk_tasks_queue_t q
     WHERE q.task_id BETWEEN %(low)s::uuid AND %(high)s::uuid ORDER BY q.task_id LIMIT 2)
) AS x
ORDER BY x.task_id
LIMIT 2
