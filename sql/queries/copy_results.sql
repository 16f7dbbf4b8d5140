-- Bulk post, part 1: the result rows (1 Unprocessed) of jobs without keys, in
-- COPY's binary format (the column order is the row order the producer writes).
COPY sk_task_results_t (
    task_id, task_type, task_source, task_payload, task_status, task_priority,
    task_error_count, task_last_error_is_recoverable, task_processing_time_milliseconds,
    task_posted_at_ts)
FROM STDIN (FORMAT BINARY)
