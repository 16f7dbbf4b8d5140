-- How many results one policy would purge now (at most %(cap)s counted): what
-- `skconsole retention set` shows before it asks.
SELECT count(*) AS eligible FROM (
    SELECT 1 FROM sk_task_results_t r
    WHERE sk_retention_due(r.task_status, r.task_type, r.task_processing_finalized_at_ts,
            %(statuses)s::integer[], %(task_type)s::text, %(except_types)s::text[],
            %(older_than_s)s::double precision)
        AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)
    LIMIT %(cap)s
) AS matching
