-- How many result rows an operator selection matches (see ops_select_results.sql).
SELECT count(*) AS n
FROM sk_task_results_t r
WHERE r.task_status = ANY(%(statuses)s::integer[])
    AND (%(ids)s::uuid[] IS NULL OR r.task_id = ANY(%(ids)s::uuid[]))
    AND (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
    AND (%(signature)s::text IS NULL OR r.sk_error_signature = %(signature)s::text
         OR (%(signature)s::text = '(no error text)' AND r.sk_error_signature IS NULL))
    AND (%(cutoff)s::timestamptz IS NULL
         OR coalesce(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
                r.task_posted_at_ts) < %(cutoff)s::timestamptz)
