-- The task types with a fleet-wide limit, and their jobs running now (the
-- in-flight rows of limited types only, through their partial index).
SELECT t.task_type, t.tt_max_running AS concurrency, t.tt_rate_count AS rate_count,
    t.tt_rate_seconds AS rate_seconds,
    (SELECT count(*) FROM sk_task_results_t r
     WHERE r.task_status = 2 AND r.task_type = t.task_type) AS running
FROM sk_task_types_t t
WHERE t.tt_max_running IS NOT NULL OR t.tt_rate_count IS NOT NULL
ORDER BY t.task_type
