-- Post one job that has no key: its id is new (uuid4), so there is nothing to
-- conflict with and nothing to re-run: the two rows and the NOTIFY, the least
-- a post can be (keyed jobs go through post_jobs.sql). The result row carries the
-- trace context of a post made inside a trace (132_skconsole_trace.sql), else NULL.
-- sk:records-itself: the post's row of the per-minute record is written here
-- (rec), and the record's triggers leave this statement alone
-- (146_skconsole_record.sql): a third plain insert costs a lone post about a
-- quarter of what the trigger did.
WITH r AS (
    INSERT INTO sk_task_results_t (
        task_id, task_type, task_source, task_payload, task_status, task_priority,
        task_error_count, task_last_error_is_recoverable, task_processing_time_milliseconds,
        task_posted_at_ts, sk_trace_context)
    VALUES (%(id)s, %(type)s, %(source)s, %(payload)s, 1, %(priority)s, 0, false, 0, now(),
        %(trace)s)
),
q AS (
    INSERT INTO sk_tasks_queue_t (
        task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    VALUES (%(id)s, %(type)s, %(source)s, %(payload)s, %(priority)s,
        now(), coalesce(%(run_at)s::timestamptz,
            now() + %(delay_ms)s::double precision * interval '1 millisecond'))
),
rec AS (
    INSERT INTO sk_record_fresh_t (minute, task_type, posted)
    VALUES (sk_record_minute(now()), %(type)s, 1)
)
SELECT 1 AS posted, pg_notify('sk_task_queue_item_added', '') AS notified, 0 AS rerun_requested
