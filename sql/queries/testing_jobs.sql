-- skconsole.testing: one statement for every read of the package, so that a job always reads the
-- same whichever helper asks: its result row, or, for a job some other tool put
-- in the queue without one, its queue row. Each filter is off when its
-- parameter is NULL (or false).
SELECT coalesce(r.task_id, q.task_id) AS task_id,
    coalesce(r.task_type, q.task_type) AS task_type,
    coalesce(r.task_source, q.task_source) AS source,
    coalesce(r.task_payload, q.task_payload) AS payload_json,
    coalesce(r.task_status, 1) AS status,
    coalesce(r.task_priority, q.task_priority) AS priority,
    r.task_last_error AS error,
    coalesce(r.task_error_count, 0) AS error_count,
    coalesce(r.sk_attempt, 0) AS attempts,
    coalesce(r.task_processing_time_milliseconds, 0) AS processing_ms,
    coalesce(r.task_posted_at_ts, q.task_posted_at_ts) AS posted_at,
    r.task_first_processing_attempted_at_ts AS first_run_at,
    r.task_processing_finalized_at_ts AS finished_at,
    q.task_locked_until_ts AS run_after,
    q.task_lock_handle_id AS queue_order,
    now() AS read_at,
    r.sk_parent_task_id AS parent_id,
    coalesce(r.sk_snooze_count, 0) AS snooze_count
FROM sk_task_results_t r
FULL JOIN sk_tasks_queue_t q ON q.task_id = r.task_id
WHERE (%(owner)s::uuid IS NULL OR r.sk_owner_worker_id = %(owner)s::uuid)
    AND (%(types)s::text[] IS NULL OR coalesce(r.task_type, q.task_type) = ANY(%(types)s::text[]))
    AND (%(statuses)s::integer[] IS NULL OR coalesce(r.task_status, 1) = ANY(%(statuses)s::integer[]))
    -- queued: in the queue, or waiting for other jobs (after=: no queue row yet)
    AND (NOT %(queued)s OR q.task_id IS NOT NULL
         OR (r.task_status = 1 AND EXISTS (SELECT 1 FROM sk_task_after_t e WHERE e.task_id = r.task_id)))
    AND (%(due_within)s::double precision IS NULL
        OR q.task_locked_until_ts < now() + %(due_within)s::double precision * interval '1 second')
