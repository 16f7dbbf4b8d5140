-- Operator selection over waiting jobs (bump, cancel previews): queue rows,
-- with their result row's status (1 when a hand-posted row has none).
SELECT q.task_id, q.task_type::text AS task_type, coalesce(r.task_status, 1) AS status,
    q.task_priority AS priority, coalesce(r.task_error_count, 0) AS error_count,
    coalesce(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
        r.task_posted_at_ts, q.task_posted_at_ts) AS at,
    r.sk_error_signature AS note
FROM sk_tasks_queue_t q
LEFT JOIN sk_task_results_t r ON r.task_id = q.task_id
WHERE coalesce(r.task_status, 1) = ANY(%(statuses)s::integer[])
    AND (%(ids)s::uuid[] IS NULL OR q.task_id = ANY(%(ids)s::uuid[]))
    AND (%(task_type)s::text IS NULL OR q.task_type = %(task_type)s::text)
    AND (%(signature)s::text IS NULL OR r.sk_error_signature = %(signature)s::text
         OR (%(signature)s::text = '(no error text)' AND r.task_id IS NOT NULL
             AND r.sk_error_signature IS NULL))
    AND (%(cutoff)s::timestamptz IS NULL
         OR coalesce(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
                r.task_posted_at_ts, q.task_posted_at_ts) < %(cutoff)s::timestamptz)
ORDER BY at, q.task_id
LIMIT %(limit)s
