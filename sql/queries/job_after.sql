-- The jobs one job was posted after= (fan-in: sk_after_ids, kept after its
-- release), each with its type and status now (NULL: purged, or a queue row
-- posted by hand without a result row), and whether the job still waits for
-- them (its edges in sk_task_after_t).
SELECT a.after_id AS task_id, p.task_type::text AS task_type, p.task_status AS status,
    EXISTS (SELECT 1 FROM sk_task_after_t e WHERE e.task_id = r.task_id) AS waiting
FROM sk_task_results_t r
CROSS JOIN LATERAL unnest(r.sk_after_ids) AS a(after_id)
LEFT JOIN sk_task_results_t p ON p.task_id = a.after_id
WHERE r.task_id = %(task_id)s
ORDER BY a.after_id
