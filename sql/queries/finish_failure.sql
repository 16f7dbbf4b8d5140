-- Record failed attempts, fenced like successes (token, owner, status; a row
-- locked by someone else is written later, see finish_success.sql). The worker decided
-- each new status from the error count it claimed with (the fence guarantees
-- nobody changed it since): 4 Error re-posts the job with its back-off, 5
-- Faulted parks it for an operator, 6 Fatal ends it. A keyed re-post that
-- arrived while it ran wins over all three: the newest payload runs afresh
-- (1 Unprocessed, error count 0, ready now), exactly once. Short of that, an
-- attempt an operator asked to cancel ends 7 Cancelled however it failed
-- (the engine says 7 itself when it stopped the handler for it; a failure
-- that beat the request to the worker is turned into one here).
WITH d AS (
    SELECT * FROM unnest(
        %(ids)s::uuid[], %(claims)s::bigint[], %(ms)s::bigint[], %(statuses)s::integer[],
        %(errors)s::text[], %(recoverable)s::boolean[], %(delays_ms)s::double precision[])
        AS d(task_id, claim_id, ms, status, error, recoverable, delay_ms)
),
-- only when asked (the retry of a batch that met a row someone else holds
-- locked): the rows no one else holds; otherwise never read, and free
unlocked AS (
    SELECT r.task_id FROM sk_task_results_t r
    WHERE %(skip_locked)s AND r.task_id = ANY(%(ids)s::uuid[]) AND r.task_status + 0 = 2
    FOR UPDATE SKIP LOCKED
),
failed AS (
    UPDATE sk_task_results_t r SET
        task_status = CASE WHEN r.sk_rerun_requested THEN 1
                           WHEN r.sk_cancel_requested_at_ts IS NOT NULL THEN 7 ELSE d.status END,
        task_error_count = CASE WHEN r.sk_rerun_requested THEN 0 ELSE r.task_error_count + 1 END,
        task_last_error = CASE
            -- the cancel is superseded by the re-post: it is no error of the job's
            WHEN r.sk_rerun_requested AND (d.status = 7 OR r.sk_cancel_requested_at_ts IS NOT NULL)
            THEN r.task_last_error
            WHEN r.sk_cancel_requested_at_ts IS NOT NULL AND d.status <> 7
                AND NOT r.sk_rerun_requested
            THEN sk_task_error('skconsole.JobCancelled',
                'cancelled by an operator while it ran; the attempt failed before the worker '
                || 'heard of it: ' || sk_error_final_line(d.error),
                sk_error_json(d.error) ->> 'StackTrace')
            ELSE d.error END,
        task_last_error_is_recoverable = d.recoverable,
        task_processing_time_milliseconds = r.task_processing_time_milliseconds + d.ms,
        task_processing_finalized_at_ts =
            CASE WHEN NOT r.sk_rerun_requested
                AND (d.status IN (5, 6, 7) OR r.sk_cancel_requested_at_ts IS NOT NULL)
            THEN now() END,
        -- a keyed re-post that arrived while it ran: the re-run takes its payload
        -- and priority (sk_rerun_value, 110_skconsole_shared.sql)
        task_payload = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_payload, r.task_payload),
        task_priority = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_priority, r.task_priority),
        sk_rerun_payload = NULL,
        sk_rerun_priority = NULL,
        sk_rerun_requested = false,
        sk_cancel_requested_at_ts = CASE WHEN r.sk_rerun_requested THEN NULL
            ELSE r.sk_cancel_requested_at_ts END
    FROM d
    -- "= ANY" and "+ 0": only the primary key may serve this, whatever the
    -- statistics say (why: FINISH_SETTINGS in skconsole/worker/results.py)
    WHERE r.task_id = ANY(%(ids)s::uuid[]) AND r.task_id = d.task_id
        AND r.task_status + 0 = 2 AND r.sk_owner_worker_id = %(worker_id)s
        AND r.sk_claim_id = d.claim_id
        AND (NOT %(skip_locked)s OR r.task_id IN (SELECT task_id FROM unlocked))
    RETURNING r.task_id, r.task_status, r.task_type, r.task_source, r.task_payload, r.task_priority,
        d.delay_ms, r.sk_attempt, r.sk_claim_id, r.sk_owner_worker_id,
        r.task_last_processing_attempted_at_ts AS started_at,
        -- that attempt's error: the one stored, but the handler's own when a re-post
        -- superseded the attempt (the row keeps its earlier error then)
        CASE WHEN r.task_status = 1 THEN d.error ELSE r.task_last_error END AS attempt_error
),
-- each attempt this statement ended, kept in sk_attempts_t (sk_record_attempts,
-- 138_skconsole_attempt_record.sql); read by ended, so it runs whenever a row
-- was written
attempted AS MATERIALIZED (
    SELECT sk_record_attempts(array_agg(task_id), array_agg(sk_attempt), array_agg(sk_claim_id),
        array_agg(started_at), array_agg(sk_owner_worker_id), array_agg('failed'::text),
        array_agg(task_status), array_agg(attempt_error)) AS n
    FROM failed
),
retried AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT task_id, task_type, task_source, task_payload, task_priority, now(),
        now() + CASE WHEN task_status = 4 THEN delay_ms ELSE 0 END * interval '1 millisecond'
    FROM failed WHERE task_status IN (1, 4)
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
),
-- the jobs waiting (after=) for one that ended Fatal or Cancelled here: cancelled
-- (and theirs), or run with after_failure="run" (sk_release_after,
-- 130_skconsole_after.sql); the function is called only when one has waiters
ended AS MATERIALIZED (
    SELECT ARRAY(SELECT task_id FROM failed WHERE task_status IN (6, 7)) AS ids FROM attempted
),
released AS MATERIALIZED (
    SELECT CASE WHEN EXISTS (SELECT 1 FROM sk_task_after_t e WHERE e.after_id = ANY(x.ids))
        THEN sk_release_after(x.ids, false) END AS n
    FROM ended x
),
notified AS (
    SELECT CASE WHEN (SELECT count(*) FROM retried) > 0
        THEN pg_notify('sk_task_queue_item_added', '') END AS n
    FROM released
)
-- the notification as a sub-select, not a join: the finish connection has no nested loops
SELECT failed.task_id, failed.task_status, (SELECT n FROM notified) AS notified FROM failed
