-- How many result rows an operator selection matches (see ops_select_results.sql).
SELECT count(*) AS n
FROM sk_task_results_t r
WHERE r.task_status = ANY(%(statuses)s::integer[])
    AND (%(ids)s::uuid[] IS NULL OR r.task_id = ANY(%(ids)s::uuid[]))
    AND (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
    AND sk_signature_matches(r.sk_error_signature, %(signature)s::text)
    AND sk_payload_term(r.task_payload, %(where_path)s::text[], %(where_value)s::text)
    AND (%(where_rest)s::jsonb IS NULL OR sk_payload_matches(r.task_payload, %(where_rest)s::jsonb))
    AND (%(cutoff)s::timestamptz IS NULL
         OR sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
                r.task_posted_at_ts) < %(cutoff)s::timestamptz)
