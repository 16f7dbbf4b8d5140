-- Every task type of the results table (any status: Processed, Fatal,
-- Cancelled ...), by a loose index scan of idx_sk_task_results_t_task_type:
-- one index probe per type, however many rows the table holds (a DISTINCT
-- would read every entry of the index). Stakhanovise.NET's tables alone serve it.
WITH RECURSIVE results AS (
    (SELECT r.task_type FROM sk_task_results_t r ORDER BY r.task_type LIMIT 1)
    UNION ALL
    SELECT (SELECT r.task_type FROM sk_task_results_t r
            WHERE r.task_type > t.task_type ORDER BY r.task_type LIMIT 1)
    FROM results t
    WHERE t.task_type IS NOT NULL
)
SELECT task_type::text AS task_type FROM results WHERE task_type IS NOT NULL
