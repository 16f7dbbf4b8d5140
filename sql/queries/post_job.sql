-- Post one job: post_jobs.sql for a single job, with plain parameters instead
-- of arrays, so a lone post is one cheap prepared statement and one round
-- trip. Same rules: a keyed job waiting (1, 4) is left alone, a finished one
-- (3, 5, 6, 7) is posted afresh, a running one (2) is asked to run once more
-- with the new payload when its attempt ends.
WITH rerun AS (
    UPDATE sk_task_results_t AS t
    SET sk_rerun_requested = true, task_payload = %(payload)s, task_priority = %(priority)s
    WHERE %(keyed)s::boolean AND t.task_id = %(id)s::uuid AND t.task_status = 2
    RETURNING t.task_id
),
r AS (
    INSERT INTO sk_task_results_t AS t (
        task_id, task_type, task_source, task_payload, task_status, task_priority,
        task_error_count, task_last_error_is_recoverable, task_processing_time_milliseconds,
        task_posted_at_ts)
    SELECT %(id)s::uuid, %(type)s, %(source)s, %(payload)s, 1, %(priority)s, 0, false, 0, now()
    WHERE NOT EXISTS (SELECT 1 FROM rerun)
    ON CONFLICT (task_id) DO UPDATE SET
        task_status = 1,
        task_type = EXCLUDED.task_type,
        task_source = EXCLUDED.task_source,
        task_payload = EXCLUDED.task_payload,
        task_priority = EXCLUDED.task_priority,
        task_error_count = 0,
        task_last_error_is_recoverable = false,
        task_processing_time_milliseconds = 0,
        task_posted_at_ts = now(),
        task_first_processing_attempted_at_ts = NULL,
        task_last_processing_attempted_at_ts = NULL,
        task_processing_finalized_at_ts = NULL,
        sk_owner_worker_id = NULL,
        sk_rerun_requested = false
    WHERE t.task_status IN (3, 5, 6, 7)
    RETURNING t.task_id
),
q AS (
    INSERT INTO sk_tasks_queue_t (
        task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT r.task_id, %(type)s, %(source)s, %(payload)s, %(priority)s,
        now(), now() + %(delay_ms)s::double precision * interval '1 millisecond'
    FROM r
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
)
SELECT s.posted, CASE WHEN s.posted > 0 THEN pg_notify('sk_task_queue_item_added', '') END,
    (SELECT count(*) FROM rerun) AS rerun_requested
FROM (SELECT count(*) AS posted FROM q) AS s
