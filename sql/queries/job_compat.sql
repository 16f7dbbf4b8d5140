-- One job in full on a database with Stakhanovise.NET's tables alone (read
-- degraded): the columns of job.sql, skconsole's own (owner, attempt,
-- signature, lineage, snoozes) empty.
SELECT r.task_id, r.task_type, r.task_source, r.task_payload, r.task_status, r.task_priority,
    r.task_error_count, r.task_last_error, r.task_last_error_is_recoverable,
    r.task_processing_time_milliseconds, r.task_posted_at_ts, r.task_first_processing_attempted_at_ts,
    r.task_last_processing_attempted_at_ts, r.task_processing_finalized_at_ts,
    NULL::uuid, 0, NULL::text, q.task_locked_until_ts,
    NULL::uuid, NULL::varchar, NULL::varchar, NULL::integer, 0, 0
FROM sk_task_results_t r
LEFT JOIN sk_tasks_queue_t q ON q.task_id = r.task_id
WHERE r.task_id = %(task_id)s
