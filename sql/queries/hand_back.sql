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
        -- and priority (the running attempt kept its own: sk_rerun_payload, 136)
        task_payload = CASE WHEN r.sk_rerun_requested
            THEN coalesce(r.sk_rerun_payload, r.task_payload) ELSE r.task_payload END,
        task_priority = CASE WHEN r.sk_rerun_requested
            THEN coalesce(r.sk_rerun_priority, r.task_priority) ELSE r.task_priority END,
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
        r.task_priority, d.delay_ms, d.snoozed, r.sk_attempt, r.sk_claim_id,
        r.task_last_processing_attempted_at_ts AS started_at,
        -- only a cancelled attempt has an error of its own (the row keeps its earlier one)
        CASE WHEN r.task_status = 7 THEN r.task_last_error END AS attempt_error
),
-- each attempt this statement recorded, kept in sk_attempts_t (120_skconsole_attempts.sql)
me AS (
    SELECT w.worker_host, w.worker_pid, w.worker_app_version FROM sk_workers_t w
    WHERE w.worker_id = %(worker_id)s
),
attempted AS (
    INSERT INTO sk_attempts_t (task_id, attempt, claim_id, started_at_ts, ended_at_ts, worker_id,
        worker_host, worker_pid, app_version, outcome, status, error)
    SELECT back.task_id, back.sk_attempt, back.sk_claim_id, back.started_at, now(), %(worker_id)s,
        (SELECT worker_host FROM me), (SELECT worker_pid FROM me),
        (SELECT worker_app_version FROM me), CASE WHEN back.snoozed THEN 'snoozed' ELSE 'handed_back' END, back.task_status, back.attempt_error
    FROM back
    ON CONFLICT (task_id, attempt) DO UPDATE SET claim_id = EXCLUDED.claim_id,
        started_at_ts = EXCLUDED.started_at_ts, ended_at_ts = EXCLUDED.ended_at_ts,
        worker_id = EXCLUDED.worker_id, worker_host = EXCLUDED.worker_host,
        worker_pid = EXCLUDED.worker_pid, app_version = EXCLUDED.app_version,
        outcome = EXCLUDED.outcome, status = EXCLUDED.status, error = EXCLUDED.error
    RETURNING 1
),
-- the attempts past the newest sk_attempts_kept() of a job; the array is empty
-- (and nothing read) until a job has had that many
trimmed AS (
    DELETE FROM sk_attempts_t a USING back
    WHERE a.task_id = ANY(ARRAY(SELECT task_id FROM back WHERE sk_attempt > sk_attempts_kept()))
        AND a.task_id = back.task_id AND a.attempt <= back.sk_attempt - sk_attempts_kept()
    RETURNING 1
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
    SELECT CASE WHEN count(*) > 0 THEN pg_notify('sk_task_queue_item_added', '') END AS n FROM q
)
-- the notification as a sub-select, not a join: the finish connection has no nested loops
SELECT back.task_id, back.task_status, (SELECT n FROM notified) AS notified FROM back
