-- Cancel waiting jobs by id, re-checking in this statement that each still
-- waits and matches: its queue row goes, its result row becomes 7 Cancelled
-- (created if a hand-posted job had none). Queue row locked first with SKIP
-- LOCKED: a job a worker is claiming right now is left alone.
WITH lq AS (
    SELECT q.task_id
    FROM sk_tasks_queue_t q
    LEFT JOIN sk_task_results_t r ON r.task_id = q.task_id
    WHERE q.task_id = ANY(%(ids)s::uuid[])
        AND coalesce(r.task_status, 1) = ANY(%(statuses)s::integer[])
        AND (%(task_type)s::text IS NULL OR q.task_type = %(task_type)s::text)
        AND (%(signature)s::text IS NULL OR r.sk_error_signature = %(signature)s::text
             OR (%(signature)s::text = '(no error text)' AND r.task_id IS NOT NULL
                 AND r.sk_error_signature IS NULL))
        AND (%(cutoff)s::timestamptz IS NULL
             OR coalesce(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
                    r.task_posted_at_ts, q.task_posted_at_ts) < %(cutoff)s::timestamptz)
    FOR UPDATE OF q SKIP LOCKED
),
removed AS (
    DELETE FROM sk_tasks_queue_t q USING lq
    WHERE q.task_id = lq.task_id
    RETURNING q.task_id, q.task_type, q.task_source, q.task_payload, q.task_priority, q.task_posted_at_ts
),
cancelled AS (
    INSERT INTO sk_task_results_t AS r (task_id, task_type, task_source, task_payload, task_status,
        task_priority, task_error_count, task_last_error_is_recoverable,
        task_processing_time_milliseconds, task_posted_at_ts, task_processing_finalized_at_ts)
    SELECT task_id, task_type, task_source, task_payload, 7, task_priority, 0, false, 0,
        task_posted_at_ts, now()
    FROM removed
    ON CONFLICT (task_id) DO UPDATE SET
        task_status = 7,
        task_processing_finalized_at_ts = now(),
        sk_rerun_requested = false
    RETURNING r.task_id
)
SELECT task_id FROM cancelled
