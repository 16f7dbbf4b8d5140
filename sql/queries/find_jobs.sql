-- skconsole find: the jobs matching every given filter, most recently active
-- first. A NULL filter matches all (folded away: the plan is made for the
-- values). Payload terms: the first as a plain expression (an index made by
-- skconsole find-index on its path serves it), the rest through
-- sk_payload_matches; a payload that is not JSON matches no term. --error: a
-- case-insensitive substring of the stored last error, escaped for LIKE by the
-- caller. --since: last activity (finalized, else last attempt, else posted).
-- ids, parent (the jobs one job posted: the parent index) and group (a failure
-- group's signature) narrow it to the jobs an audit row, a job or a group names;
-- after: the jobs still waiting for one job (fan-in edges, on their after_id index).
-- A job that waits in the queue says when it is due (its queue row, by primary key:
-- one probe for each job listed).
SELECT r.task_id, r.task_type::text AS task_type, r.task_status AS status,
    r.task_priority AS priority, r.task_error_count AS error_count,
    r.task_posted_at_ts AS posted_at,
    sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
        r.task_posted_at_ts) AS last_active_at,
    r.task_payload AS payload, r.task_last_error AS last_error,
    r.task_last_processing_attempted_at_ts AS last_attempt_at,
    (SELECT q.task_locked_until_ts FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id) AS due_at
FROM sk_task_results_t r
WHERE (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
    AND (%(statuses)s::integer[] IS NULL OR r.task_status = ANY(%(statuses)s::integer[]))
    AND (%(since)s::timestamptz IS NULL
         OR sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
                r.task_posted_at_ts) >= %(since)s::timestamptz)
    AND (%(error)s::text IS NULL OR r.task_last_error ILIKE %(error)s::text)
    AND (%(ids)s::uuid[] IS NULL OR r.task_id = ANY(%(ids)s::uuid[]))
    AND (%(parent)s::uuid IS NULL OR r.sk_parent_task_id = %(parent)s::uuid)
    AND (%(after)s::uuid IS NULL OR r.task_id IN (
            SELECT e.task_id FROM sk_task_after_t e WHERE e.after_id = %(after)s::uuid))
    AND (%(group)s::text IS NULL OR sk_signature_matches(r.sk_error_signature, %(group)s::text))
    AND sk_payload_term(r.task_payload, %(where_path)s::text[], %(where_value)s::text)
    AND (%(where_rest)s::jsonb IS NULL OR sk_payload_matches(r.task_payload, %(where_rest)s::jsonb))
ORDER BY last_active_at DESC, r.task_id
LIMIT %(limit)s
