-- Every task type skconsole knows of, with jobs waiting or not (the depth read
-- model lists each, so an idle type, or one whose jobs all failed, can still be
-- selected, paused, limited or requeued): the types of the results table (any
-- status: Processed, Fatal, Cancelled ...), with stored settings (paused,
-- limits, SLOs, or registered by a worker: sk_task_types_t), a schedule or a
-- retention policy of their own. The queue's types come with depth.sql.
-- The results' types by a loose index scan of idx_sk_task_results_t_task_type:
-- one index probe per type, however many rows the table holds (a DISTINCT
-- would read every entry of the index).
WITH RECURSIVE results AS (
    (SELECT r.task_type FROM sk_task_results_t r ORDER BY r.task_type LIMIT 1)
    UNION ALL
    SELECT (SELECT r.task_type FROM sk_task_results_t r
            WHERE r.task_type > t.task_type ORDER BY r.task_type LIMIT 1)
    FROM results t
    WHERE t.task_type IS NOT NULL
)
SELECT task_type::text AS task_type FROM results WHERE task_type IS NOT NULL
UNION SELECT task_type::text FROM sk_task_types_t
UNION SELECT task_type::text FROM sk_schedules_t
UNION SELECT ret_task_type::text FROM sk_retention_t WHERE ret_task_type <> ''
