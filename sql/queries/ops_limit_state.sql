-- A task type's limits (none when it has no row) and what it holds now: for
-- the preview of `skconsole limit`.
SELECT t.tt_max_running AS max_running, t.tt_rate_count AS rate_count,
    t.tt_rate_seconds AS rate_seconds, t.tt_key_path AS key_path,
    t.tt_key_max_running AS key_max_running, t.tt_key_rate_count AS key_rate_count,
    t.tt_key_rate_seconds AS key_rate_seconds,
    (SELECT count(*) FROM sk_task_results_t r
     WHERE r.task_status = 2 AND r.task_type = %(task_type)s) AS running,
    (SELECT count(*) FROM sk_tasks_queue_t q WHERE q.task_type = %(task_type)s) AS waiting
FROM (SELECT 1) AS one
LEFT JOIN sk_task_types_t t ON t.task_type = %(task_type)s
