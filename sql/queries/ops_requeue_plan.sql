-- Before a requeue acts (and in its preview): the jobs in the order a spread makes
-- them due (priority, then when they were posted: the claim's own order), each with
-- its error count and its type's retry limit (NULL: no worker recorded one), and the
-- instant a spread starts from.
SELECT r.task_id, r.task_error_count AS error_count, t.tt_max_attempts AS max_attempts,
    now() AS now
FROM sk_task_results_t r
LEFT JOIN sk_task_types_t t ON t.task_type = r.task_type
WHERE r.task_id = ANY(%(ids)s::uuid[])
ORDER BY r.task_priority, r.task_posted_at_ts, r.task_id
