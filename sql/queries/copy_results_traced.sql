-- Bulk post, part 1, of a post made inside an active trace: the rows of
-- copy_results.sql plus the trace context they were posted under (the last
-- column: 132_skconsole_trace.sql). A post outside a trace uses
-- copy_results.sql and sends nothing more.
COPY sk_task_results_t (
    task_id, task_type, task_source, task_payload, task_status, task_priority,
    task_error_count, task_last_error_is_recoverable, task_processing_time_milliseconds,
    task_posted_at_ts, sk_trace_context)
FROM STDIN (FORMAT BINARY)
