-- Post jobs in one statement (one round trip for a single job): a result row
-- (1 Unprocessed) and a queue row each, then one NOTIFY for the whole batch.
-- A keyed job whose result row already exists is left alone while it waits
-- (1, 4), posted again when it has finished (3, 5, 6, 7), and, while it runs
-- (2), asked to run once more with the new payload when the current attempt
-- ends (sk_rerun_requested; the payload waits in sk_rerun_payload, so the
-- running attempt keeps its own: its key for a per-key limit, what find shows). sk_attempt is never reset: it fences late
-- finishers of earlier attempts. A job that waits is not even locked: an
-- INSERT's ON CONFLICT DO UPDATE locks the conflicting row whatever its WHERE
-- says, and a post inside a caller's transaction would hold that lock until
-- the caller commits (and claims would have to go around it). %(trace)s: the
-- trace context of the post (132_skconsole_trace.sql), NULL outside a trace;
-- a re-posted job runs under its newest post's.
WITH d AS (
    SELECT *
    FROM unnest(
        %(ids)s::uuid[], %(types)s::varchar[], %(sources)s::varchar[],
        %(payloads)s::text[], %(priorities)s::integer[], %(delays_ms)s::double precision[],
        %(keyed)s::boolean[], %(run_ats)s::timestamptz[]
    ) WITH ORDINALITY
        AS d(task_id, task_type, task_source, task_payload, task_priority, delay_ms, keyed, run_at,
            ord)
),
rerun AS (
    -- only rows the INSERT below leaves alone: a row changed twice in one
    -- statement is an error
    UPDATE sk_task_results_t AS t
    SET sk_rerun_requested = true, sk_rerun_payload = d.task_payload,
        sk_rerun_priority = d.task_priority, sk_trace_context = %(trace)s::text
    FROM d
    WHERE t.task_id = d.task_id AND d.keyed AND t.task_status = 2
    RETURNING t.task_id
),
r AS (
    INSERT INTO sk_task_results_t AS t (
        task_id, task_type, task_source, task_payload, task_status, task_priority,
        task_error_count, task_last_error_is_recoverable, task_processing_time_milliseconds,
        task_posted_at_ts, sk_trace_context)
    SELECT task_id, task_type, task_source, task_payload, 1, task_priority, 0, false, 0, now(),
        %(trace)s::text
    FROM d
    WHERE NOT EXISTS (SELECT 1 FROM rerun x WHERE x.task_id = d.task_id)
        -- waiting as this statement sees it: the post is satisfied by that job
        AND NOT EXISTS (SELECT 1 FROM sk_task_results_t w
                        WHERE w.task_id = d.task_id AND w.task_status IN (1, 4))
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
        sk_rerun_requested = false,
        sk_rerun_payload = NULL,
        sk_rerun_priority = NULL,
        sk_trace_context = EXCLUDED.sk_trace_context,
        -- a .NET consumer may take it: it reads only QueuedTaskError JSON
        task_last_error = sk_error_as_json(t.task_last_error)
    WHERE t.task_status IN (3, 5, 6, 7)
    RETURNING t.task_id
),
q AS (
    INSERT INTO sk_tasks_queue_t (
        task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT d.task_id, d.task_type, d.task_source, d.task_payload, d.task_priority,
        now(), coalesce(d.run_at, now() + d.delay_ms * interval '1 millisecond')
    FROM d JOIN r ON r.task_id = d.task_id
    ORDER BY d.ord
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
)
SELECT s.posted, CASE WHEN s.posted > 0 THEN pg_notify('sk_task_queue_item_added', '') END AS notified,
    (SELECT count(*) FROM rerun) AS rerun_requested
FROM (SELECT count(*) AS posted FROM q) AS s
