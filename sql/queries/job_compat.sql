-- One job in full on a database with Stakhanovise.NET's tables alone (read
-- degraded): the columns of job.sql, skconsole's own (owner, attempt,
-- signature, lineage, snoozes) empty.
SELECT r.task_id, r.task_type, r.task_source AS source, r.task_payload AS payload,
    r.task_status AS status, r.task_priority AS priority, r.task_error_count AS error_count,
    r.task_last_error AS last_error, r.task_last_error_is_recoverable AS recoverable,
    r.task_processing_time_milliseconds AS processing_ms, r.task_posted_at_ts AS posted_at,
    r.task_first_processing_attempted_at_ts AS first_attempt_at,
    r.task_last_processing_attempted_at_ts AS last_attempt_at,
    r.task_processing_finalized_at_ts AS finalized_at,
    NULL::uuid AS owner_worker_id, 0 AS attempt, NULL::text AS signature,
    q.task_locked_until_ts AS queued_until, NULL::uuid AS parent_task_id,
    NULL::varchar AS parent_task_type, NULL::varchar AS pipeline, NULL::integer AS stage,
    0 AS snooze_count, 0::bigint AS children
FROM sk_task_results_t r
LEFT JOIN sk_tasks_queue_t q ON q.task_id = r.task_id
WHERE r.task_id = %(task_id)s
