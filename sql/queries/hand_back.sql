-- Give jobs this worker holds but will not finish back to the queue (shutdown,
-- self-fencing, a claim whose answer was lost): 1 Unprocessed, no error
-- counted, ready now or after the given delay (a sync handler's thread that
-- may still run: not claimable before its process is gone). Fenced by token
-- like a result. A keyed re-post that arrived meanwhile is satisfied by this
-- very run of the newest payload, so the request is cleared. A snooze (the
-- handler raised Snooze) is a hand-back the handler asked for: it is counted.
-- An attempt an operator asked to cancel is not handed back: it ends 7
-- Cancelled (the worker stopped, or gave up on, a job it was told to cancel),
-- unless a keyed re-post arrived while it ran: that takes precedence, and the
-- newest payload runs (this hand-back is that run).
WITH d AS (
    SELECT * FROM unnest(%(ids)s::uuid[], %(claims)s::bigint[], %(delays_ms)s::double precision[],
        %(snoozed)s::boolean[])
        AS d(task_id, claim_id, delay_ms, snoozed)
),
-- only when asked (the retry of a batch that met a row someone else holds
-- locked): the rows no one else holds; otherwise never read, and free
unlocked AS (
    SELECT r.task_id FROM sk_task_results_t r
    WHERE %(skip_locked)s AND r.task_id = ANY(%(ids)s::uuid[]) AND r.task_status + 0 = 2
    FOR UPDATE SKIP LOCKED
),
back AS (
    UPDATE sk_task_results_t r SET
        task_status = CASE WHEN r.sk_cancel_requested_at_ts IS NOT NULL
            AND NOT r.sk_rerun_requested THEN 7 ELSE 1 END,
        task_error_count = CASE WHEN r.sk_rerun_requested THEN 0 ELSE r.task_error_count END,
        task_last_error = CASE WHEN r.sk_cancel_requested_at_ts IS NOT NULL
            AND NOT r.sk_rerun_requested
            THEN sk_task_error('skconsole.JobCancelled', 'cancelled by an operator while it ran; '
                || 'its worker stopped it before the handler ended')
            ELSE r.task_last_error END,
        task_processing_finalized_at_ts = CASE WHEN r.sk_cancel_requested_at_ts IS NOT NULL
            AND NOT r.sk_rerun_requested
            THEN now() ELSE r.task_processing_finalized_at_ts END,
        sk_cancel_requested_at_ts = CASE WHEN r.sk_rerun_requested THEN NULL
            ELSE r.sk_cancel_requested_at_ts END,
        -- a keyed re-post that arrived while it ran: the re-run takes its payload
        -- and priority (sk_rerun_value, 110_skconsole_shared.sql)
        task_payload = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_payload, r.task_payload),
        task_priority = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_priority, r.task_priority),
        sk_rerun_payload = NULL,
        sk_rerun_priority = NULL,
        sk_rerun_requested = false,
        sk_snooze_count = r.sk_snooze_count + d.snoozed::integer
    FROM d
    -- "= ANY" and "+ 0": only the primary key may serve this, whatever the
    -- statistics say (why: FINISH_SETTINGS in skconsole/worker/results.py)
    WHERE r.task_id = ANY(%(ids)s::uuid[]) AND r.task_id = d.task_id
        AND r.task_status + 0 = 2 AND r.sk_owner_worker_id = %(worker_id)s
        AND r.sk_claim_id = d.claim_id
        AND (NOT %(skip_locked)s OR r.task_id IN (SELECT task_id FROM unlocked))
    RETURNING r.task_id, r.task_status, r.task_type, r.task_source, r.task_payload,
        r.task_priority, d.delay_ms, d.snoozed, r.sk_attempt, r.sk_claim_id, r.sk_owner_worker_id,
        r.task_last_processing_attempted_at_ts AS started_at,
        -- only a cancelled attempt has an error of its own (the row keeps its earlier one)
        CASE WHEN r.task_status = 7 THEN r.task_last_error END AS attempt_error
),
-- each attempt this statement ended, kept in sk_attempts_t (sk_record_attempts,
-- 138_skconsole_attempt_record.sql); read by notified, so it runs whenever a
-- row was written
attempted AS MATERIALIZED (
    SELECT sk_record_attempts(array_agg(task_id), array_agg(sk_attempt), array_agg(sk_claim_id),
        array_agg(started_at), array_agg(sk_owner_worker_id),
        array_agg(CASE WHEN snoozed THEN 'snoozed' ELSE 'handed_back' END),
        array_agg(task_status), array_agg(attempt_error)) AS n
    FROM back
),
q AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT task_id, task_type, task_source, task_payload, task_priority, now(),
        now() + delay_ms * interval '1 millisecond'
    FROM back WHERE task_status = 1
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
),
notified AS (
    SELECT CASE WHEN (SELECT count(*) FROM q) > 0 THEN pg_notify('sk_task_queue_item_added', '') END
        AS n
    FROM attempted
)
-- the notification as a sub-select, not a join: the finish connection has no nested loops
SELECT back.task_id, back.task_status, (SELECT n FROM notified) AS notified FROM back
