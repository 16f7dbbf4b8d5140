-- Operator selection over hung jobs (reap preview), judged by sk_inflight_tasks()
-- (computed once: MATERIALIZED). Age: how long the current attempt has run.
WITH i AS MATERIALIZED (
    SELECT * FROM sk_inflight_tasks(%(unowned_s)s) WHERE hung_reason IS NOT NULL
)
SELECT i.task_id, i.task_type::text AS task_type, 2 AS status, r.task_priority AS priority,
    i.task_error_count AS error_count, i.attempt_started_at AS at, i.hung_reason AS note
FROM i
JOIN sk_task_results_t r ON r.task_id = i.task_id
WHERE (%(ids)s::uuid[] IS NULL OR i.task_id = ANY(%(ids)s::uuid[]))
    AND (%(task_type)s::text IS NULL OR i.task_type = %(task_type)s::text)
    AND sk_payload_term(r.task_payload, %(where_path)s::text[], %(where_value)s::text)
    AND (%(where_rest)s::jsonb IS NULL OR sk_payload_matches(r.task_payload, %(where_rest)s::jsonb))
    AND (%(cutoff)s::timestamptz IS NULL OR i.attempt_started_at < %(cutoff)s::timestamptz)
ORDER BY at, i.task_id
LIMIT %(limit)s
