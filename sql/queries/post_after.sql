-- Post jobs that wait for others (after=), never keyed, in one statement: each
-- one's result row, decided from its parents' result rows as this statement
-- sees them (sk_after_verdict, 130_skconsole_after.sql). Every parent
-- succeeded: its queue row at once, like any post. One ended Fatal or
-- Cancelled (or is gone): it is written 7 Cancelled, saying which, unless it
-- runs anyway (after_failure="run"). Else it waits: 1 Unprocessed with no queue
-- row, and its edges (sk_task_after_t), which a parent's finish follows to
-- release it. A parent posted in this same statement is new, so pending. A
-- parent whose finish commits while this statement runs cannot see these
-- edges: the upkeep sweep (after_sweep.sql) releases such a job. %(trace)s:
-- the trace context of the post (132_skconsole_trace.sql), NULL outside a trace.
WITH d AS (
    SELECT *
    FROM unnest(
        %(ids)s::uuid[], %(types)s::varchar[], %(sources)s::varchar[],
        %(payloads)s::text[], %(priorities)s::integer[], %(delays_ms)s::double precision[],
        %(run_ats)s::timestamptz[], %(runs)s::boolean[]
    ) WITH ORDINALITY
        AS d(task_id, task_type, task_source, task_payload, task_priority, delay_ms, run_at, runs,
            ord)
),
e AS (
    SELECT DISTINCT x.task_id, x.after_id
    FROM unnest(%(edge_jobs)s::uuid[], %(edge_ids)s::uuid[]) AS x(task_id, after_id)
),
decided AS (
    SELECT d.*, coalesce(d.run_at, now() + d.delay_ms * interval '1 millisecond') AS due,
        a.after_ids, v.pending + a.new_parents AS pending, v.reason,
        CASE WHEN v.reason IS NOT NULL AND NOT d.runs THEN 'cancel'
             WHEN v.pending + a.new_parents = 0 THEN 'run'
             ELSE 'wait' END AS how
    FROM d
    CROSS JOIN LATERAL (
        SELECT array_agg(e.after_id ORDER BY e.after_id) AS after_ids,
            array_agg(e.after_id) FILTER (WHERE e.after_id NOT IN (SELECT task_id FROM d))
                AS known,
            count(*) FILTER (WHERE e.after_id IN (SELECT task_id FROM d))::integer AS new_parents
        FROM e WHERE e.task_id = d.task_id
    ) AS a
    CROSS JOIN LATERAL sk_after_verdict(coalesce(a.known, '{}'::uuid[]), '{}'::uuid[]) AS v
),
r AS (
    INSERT INTO sk_task_results_t (
        task_id, task_type, task_source, task_payload, task_status, task_priority,
        task_error_count, task_last_error_is_recoverable, task_processing_time_milliseconds,
        task_posted_at_ts, task_processing_finalized_at_ts, task_last_error,
        sk_after_ids, sk_after_failure_runs, sk_after_run_at, sk_trace_context)
    SELECT task_id, task_type, task_source, task_payload,
        CASE WHEN how = 'cancel' THEN 7 ELSE 1 END, task_priority, 0, false, 0, now(),
        CASE WHEN how = 'cancel' THEN now() END,
        CASE WHEN how = 'cancel' THEN sk_task_error('skconsole.JobCancelled', reason) END,
        after_ids, runs, due, %(trace)s::text
    FROM decided
    RETURNING task_id
),
q AS (
    INSERT INTO sk_tasks_queue_t (
        task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT task_id, task_type, task_source, task_payload, task_priority, now(), due
    FROM decided WHERE how = 'run'
    ORDER BY ord
    RETURNING task_id
),
edges AS (
    -- a parent already succeeded is recorded so on its edge: its success counts
    -- even once its row is purged
    INSERT INTO sk_task_after_t (task_id, after_id, after_succeeded)
    SELECT e.task_id, e.after_id,
        EXISTS (SELECT 1 FROM sk_task_results_t p WHERE p.task_id = e.after_id AND p.task_status = 3)
    FROM e JOIN decided ON decided.task_id = e.task_id
    WHERE decided.how = 'wait'
    RETURNING task_id
)
SELECT (SELECT count(*) FROM r) AS posted,
    CASE WHEN (SELECT count(*) FROM q) > 0 THEN pg_notify('sk_task_queue_item_added', '') END
        AS notified,
    0 AS rerun_requested
