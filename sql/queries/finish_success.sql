-- Record successful attempts, fenced: only a result row still 2 Processing,
-- owned by this worker, under the attempt's fencing token changes. A job
-- re-posted by key while it ran goes back to the queue (1 Unprocessed, a
-- fresh run of the newest payload) instead of 3 Processed. The finish
-- connection waits at most 200 ms for a row someone else holds locked; the
-- caller then writes the batch again with skip_locked, and that row later.
-- The jobs a success posts (the handler's ctx.post, a pipeline's next stage)
-- are written here, with it: only for a row this statement moved to 3
-- Processed, so a fenced late finisher, or a re-run by key, posts nothing.
-- A job waiting (after=) for one that this statement moves to 3 is released
-- here too, when that was the last it waited for (sk_release_after). Each
-- child carries the trace context it was posted under (child_traces: the
-- handler's span at ctx.post, the run's span for a pipeline's next stage; NULL
-- outside a trace, 132_skconsole_trace.sql); a released waiter keeps its own.
WITH d AS (
    SELECT * FROM unnest(%(ids)s::uuid[], %(claims)s::bigint[], %(ms)s::bigint[])
        AS d(task_id, claim_id, ms)
),
-- only when asked (the retry of a batch that met a row someone else holds
-- locked): the rows no one else holds; otherwise never read, and free
unlocked AS (
    SELECT r.task_id FROM sk_task_results_t r
    WHERE %(skip_locked)s AND r.task_id = ANY(%(ids)s::uuid[]) AND r.task_status + 0 = 2
    FOR UPDATE SKIP LOCKED
),
done AS (
    UPDATE sk_task_results_t r SET
        task_status = CASE WHEN r.sk_rerun_requested THEN 1 ELSE 3 END,
        task_processing_finalized_at_ts = CASE WHEN r.sk_rerun_requested THEN NULL ELSE now() END,
        task_processing_time_milliseconds = r.task_processing_time_milliseconds + d.ms,
        task_error_count = CASE WHEN r.sk_rerun_requested THEN 0 ELSE r.task_error_count END,
        -- a keyed re-post that arrived while it ran: the re-run takes its payload
        -- and priority (sk_rerun_value, 110_skconsole_shared.sql)
        task_payload = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_payload, r.task_payload),
        task_priority = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_priority, r.task_priority),
        sk_rerun_payload = NULL,
        sk_rerun_priority = NULL,
        sk_rerun_requested = false
    FROM d
    -- "= ANY" and "+ 0": only the primary key may serve this, whatever the
    -- statistics say (why: FINISH_SETTINGS in skconsole/worker/results.py)
    WHERE r.task_id = ANY(%(ids)s::uuid[]) AND r.task_id = d.task_id
        AND r.task_status + 0 = 2 AND r.sk_owner_worker_id = %(worker_id)s
        AND r.sk_claim_id = d.claim_id
        AND (NOT %(skip_locked)s OR r.task_id IN (SELECT task_id FROM unlocked))
    RETURNING r.task_id, r.task_status, r.task_type, r.task_source, r.task_payload, r.task_priority,
        r.sk_pipeline, r.sk_stage, r.sk_attempt, r.sk_claim_id, r.sk_owner_worker_id,
        r.task_last_processing_attempted_at_ts AS started_at
),
-- each attempt this statement ended, kept in sk_attempts_t (sk_record_attempts,
-- 138_skconsole_attempt_record.sql); read by succeeded, so it runs whenever a
-- row was written
attempted AS MATERIALIZED (
    SELECT sk_record_attempts(array_agg(task_id), array_agg(sk_attempt), array_agg(sk_claim_id),
        array_agg(started_at), array_agg(sk_owner_worker_id), array_agg('succeeded'::text),
        array_agg(task_status), array_agg(NULL::text)) AS n
    FROM done
),
born AS (
    -- a stage child (pipeline given) continues its parent's pipeline, one stage on
    SELECT c.*, CASE WHEN c.pipeline IS NOT NULL THEN coalesce(done.sk_pipeline, c.pipeline) END
            AS child_pipeline,
        CASE WHEN c.pipeline IS NOT NULL THEN coalesce(done.sk_stage, 1) + 1 END AS child_stage
    FROM unnest(%(child_parents)s::uuid[], %(child_ids)s::uuid[], %(child_types)s::varchar[],
        %(child_payloads)s::text[], %(child_priorities)s::integer[],
        %(child_delays_ms)s::double precision[], %(child_run_ats)s::timestamptz[],
        %(child_pipelines)s::varchar[], %(child_after_runs)s::boolean[], %(child_traces)s::text[])
        AS c(parent_id, task_id, task_type, task_payload, task_priority, delay_ms, run_at, pipeline,
            after_runs, trace_context)
    JOIN done ON done.task_id = c.parent_id AND done.task_status = 3
),
-- a child posted with after= (ctx.post): decided like post_after.sql, counting
-- the jobs this statement moved to 3 as succeeded and a sibling (posted by this
-- statement too) as pending; nothing is read without one. No lateral joins:
-- the finish connection has no nested loops.
succeeded AS MATERIALIZED (
    SELECT ARRAY(SELECT task_id FROM done WHERE task_status = 3) AS ids FROM attempted
),
born_wants AS MATERIALIZED (
    SELECT x.task_id, array_agg(DISTINCT x.after_id) AS after_ids,
        array_agg(DISTINCT x.after_id)
            FILTER (WHERE x.after_id <> ALL(%(child_ids)s::uuid[])) AS known,
        count(DISTINCT x.after_id)
            FILTER (WHERE x.after_id = ANY(%(child_ids)s::uuid[]))::integer AS new_parents
    FROM unnest(%(child_edge_jobs)s::uuid[], %(child_edge_ids)s::uuid[]) AS x(task_id, after_id)
    GROUP BY x.task_id
),
born_verdicts AS MATERIALIZED (
    SELECT w.task_id, w.after_ids, w.new_parents,
        sk_after_verdict(coalesce(w.known, '{}'::uuid[]), (SELECT ids FROM succeeded)) AS v
    FROM born_wants w
),
born_after AS MATERIALIZED (
    SELECT bv.task_id, bv.after_ids, (bv.v).reason AS reason,
        CASE WHEN (bv.v).reason IS NOT NULL AND NOT b.after_runs THEN 'cancel'
             WHEN (bv.v).pending + bv.new_parents = 0 THEN 'run' ELSE 'wait' END AS how
    FROM born_verdicts bv JOIN born b ON b.task_id = bv.task_id
),
born_results AS (
    INSERT INTO sk_task_results_t (
        task_id, task_type, task_source, task_payload, task_status, task_priority,
        task_error_count, task_last_error_is_recoverable, task_processing_time_milliseconds,
        task_posted_at_ts, sk_parent_task_id, sk_pipeline, sk_stage,
        task_processing_finalized_at_ts, task_last_error, sk_after_ids, sk_after_failure_runs,
        sk_after_run_at, sk_trace_context)
    SELECT b.task_id, b.task_type, done.task_type, b.task_payload,
        CASE WHEN ba.how = 'cancel' THEN 7 ELSE 1 END, b.task_priority,
        0, false, 0, now(), b.parent_id, b.child_pipeline, b.child_stage,
        CASE WHEN ba.how = 'cancel' THEN now() END,
        CASE WHEN ba.how = 'cancel' THEN sk_task_error('skconsole.JobCancelled', ba.reason) END,
        ba.after_ids, b.after_runs,
        CASE WHEN ba.task_id IS NOT NULL
            THEN coalesce(b.run_at, now() + b.delay_ms * interval '1 millisecond') END,
        b.trace_context
    FROM born b JOIN done ON done.task_id = b.parent_id
    LEFT JOIN born_after ba ON ba.task_id = b.task_id
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
),
born_edges AS (
    INSERT INTO sk_task_after_t (task_id, after_id)
    SELECT ba.task_id, unnest(ba.after_ids)
    FROM born_after ba JOIN born_results USING (task_id)
    WHERE ba.how = 'wait'
    ON CONFLICT DO NOTHING
    RETURNING task_id
),
born_queue AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT b.task_id, b.task_type, done.task_type, b.task_payload, b.task_priority, now(),
        coalesce(b.run_at, now() + b.delay_ms * interval '1 millisecond')
    FROM born b JOIN born_results USING (task_id) JOIN done ON done.task_id = b.parent_id
    LEFT JOIN born_after ba ON ba.task_id = b.task_id
    WHERE ba.task_id IS NULL OR ba.how = 'run'
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
),
rerun AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT task_id, task_type, task_source, task_payload, task_priority, now(), now()
    FROM done WHERE task_status = 1
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
),
-- the jobs waiting (after=) for a job this statement moved to 3: released, or
-- cancelled by another parent's failure (sk_release_after, 130_skconsole_after.sql).
-- One probe of sk_task_after_t's index per finished job; the function is called
-- only when one of them has waiters.
released AS MATERIALIZED (
    SELECT CASE WHEN EXISTS (SELECT 1 FROM sk_task_after_t e WHERE e.after_id = ANY(s.ids))
        THEN sk_release_after(s.ids, true) END AS n
    FROM succeeded s
),
notified AS (
    SELECT CASE WHEN (SELECT count(*) FROM rerun) + (SELECT count(*) FROM born_queue) > 0
        THEN pg_notify('sk_task_queue_item_added', '') END AS n
    FROM released
)
-- the notification as a sub-select, not a join: the finish connection has no nested loops
SELECT done.task_id, done.task_status, (SELECT n FROM notified) AS notified FROM done
