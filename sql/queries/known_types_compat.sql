-- Every task type of the results table (any status), on Stakhanovise.NET's
-- tables alone (no settings, schedules or retention of skconsole's): as
-- known_types.sql, by a loose index scan of idx_sk_task_results_t_task_type.
WITH RECURSIVE results AS (
    (SELECT r.task_type FROM sk_task_results_t r ORDER BY r.task_type LIMIT 1)
    UNION ALL
    SELECT (SELECT r.task_type FROM sk_task_results_t r
            WHERE r.task_type > t.task_type ORDER BY r.task_type LIMIT 1)
    FROM results t
    WHERE t.task_type IS NOT NULL
)
SELECT task_type::text AS task_type FROM results WHERE task_type IS NOT NULL
