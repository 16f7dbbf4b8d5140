-- Operator selection over waiting jobs (bump, cancel previews): queue rows,
-- with their result row's status (1 when a hand-posted row has none); and
-- fan-in jobs waiting for others (after=: 1 Unprocessed, no queue row yet,
-- their edges), whose result row a bump changes (their release copies it).
SELECT s.* FROM (
SELECT q.task_id, q.task_type::text AS task_type, coalesce(r.task_status, 1) AS status,
    q.task_priority AS priority, coalesce(r.task_error_count, 0) AS error_count,
    sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
        coalesce(r.task_posted_at_ts, q.task_posted_at_ts)) AS at,
    r.sk_error_signature AS note
FROM sk_tasks_queue_t q
LEFT JOIN sk_task_results_t r ON r.task_id = q.task_id
WHERE coalesce(r.task_status, 1) = ANY(%(statuses)s::integer[])
    AND (%(ids)s::uuid[] IS NULL OR q.task_id = ANY(%(ids)s::uuid[]))
    AND (%(task_type)s::text IS NULL OR q.task_type = %(task_type)s::text)
    AND sk_signature_matches(r.sk_error_signature, %(signature)s::text, r.task_id IS NOT NULL)
    AND sk_payload_term(q.task_payload, %(where_path)s::text[], %(where_value)s::text)
    AND (%(where_rest)s::jsonb IS NULL OR sk_payload_matches(q.task_payload, %(where_rest)s::jsonb))
    AND (%(cutoff)s::timestamptz IS NULL
         OR sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
                coalesce(r.task_posted_at_ts, q.task_posted_at_ts)) < %(cutoff)s::timestamptz)
UNION ALL
SELECT r.task_id, r.task_type::text, r.task_status, r.task_priority, r.task_error_count,
    r.task_posted_at_ts, 'waits for ' || cardinality(r.sk_after_ids) || ' job(s) (after=)'
FROM sk_task_results_t r
WHERE r.task_id IN (SELECT e.task_id FROM sk_task_after_t e)
    AND r.task_status = ANY(%(statuses)s::integer[])
    AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)
    AND (%(ids)s::uuid[] IS NULL OR r.task_id = ANY(%(ids)s::uuid[]))
    AND (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
    AND sk_signature_matches(r.sk_error_signature, %(signature)s::text, true)
    AND sk_payload_term(r.task_payload, %(where_path)s::text[], %(where_value)s::text)
    AND (%(where_rest)s::jsonb IS NULL OR sk_payload_matches(r.task_payload, %(where_rest)s::jsonb))
    AND (%(cutoff)s::timestamptz IS NULL OR r.task_posted_at_ts < %(cutoff)s::timestamptz)
) AS s
ORDER BY s.at, s.task_id
LIMIT %(limit)s
