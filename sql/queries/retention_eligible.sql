-- How many results one policy would purge now (at most %(cap)s counted): what
-- `skconsole retention set` shows before it asks.
SELECT count(*) AS eligible FROM (
    SELECT 1 FROM sk_task_results_t r
    WHERE r.task_status = ANY(%(statuses)s::integer[])
        AND (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
        AND (%(except_types)s::text[] IS NULL OR r.task_type <> ALL(%(except_types)s::text[]))
        AND r.task_processing_finalized_at_ts
            < now() - %(older_than_s)s::double precision * interval '1 second'
        AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)
    LIMIT %(cap)s
) AS matching
