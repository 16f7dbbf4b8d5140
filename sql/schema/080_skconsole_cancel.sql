-- skconsole's additive objects, schema version 5: cancelling running jobs.
-- Additive like 020-070: a nullable column and functions; every statement can
-- run again and changes nothing.

-- When an operator asked to cancel the job's current attempt (skconsole
-- cancel on a job in 2 Processing). The owning worker is told on its own
-- channel and stops the handler; whatever way that attempt then ends short of
-- a success (the handler stopped, failed, snoozed, timed out, was handed back
-- at shutdown or by self-fencing, or was reaped after its worker died), the
-- statement recording it makes the job 7 Cancelled instead of retrying it
-- (finish_failure.sql, hand_back.sql, reap.sql). A success still counts: the
-- work was done. Every claim clears it: it concerns one attempt.
ALTER TABLE sk_task_results_t ADD COLUMN IF NOT EXISTS sk_cancel_requested_at_ts timestamptz;

-- The channel a worker LISTENs on for what concerns it alone (cancel
-- requests): one per worker id, so a request wakes only the worker it is for.
CREATE OR REPLACE FUNCTION sk_worker_channel(worker uuid)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'sk_worker_' || replace(worker::text, '-', '') $$;

-- How long a handler has to stop after a cancel request before the in-flight
-- view says "cancel requested, still running" (an async handler stops at its
-- next await; a sync one when it next looks at ctx.cancelled).
CREATE OR REPLACE FUNCTION sk_cancel_deadline_seconds()
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 10.0::double precision $$;

-- Every job in 2 Processing with its owner's liveness, whether a cancel is
-- pending, and the one verdict of "hung" that the automatic reaper, the
-- operator's reap and cancel, and the console all use. A job is hung when its owner's lease has lapsed (the owner has stopped
-- it, or is dead), when its owner is not registered at all, or, with no owner
-- recorded (a Stakhanovise.NET worker runs it), when it has been processing
-- for longer than unowned_after_seconds (never, when that is NULL: a job no
-- worker of ours claimed is not ours to judge unless an operator asks). A job over its type's timeout whose
-- worker is alive is not hung: the worker enforces timeouts itself, and a sync
-- handler it cannot interrupt keeps the job until it returns.
DROP FUNCTION IF EXISTS sk_inflight_tasks(double precision, double precision, double precision);
CREATE OR REPLACE FUNCTION sk_inflight_tasks(unowned_after_seconds double precision)
RETURNS TABLE (
    task_id uuid,
    task_type varchar,
    task_attempt integer,
    claim_id bigint,
    task_error_count integer,
    attempt_started_at timestamptz,
    worker_id uuid,
    worker_host varchar,
    worker_pid integer,
    worker_connected boolean,
    heartbeat_at timestamptz,
    heartbeat_age_s double precision,
    reapable_in_s double precision,
    timeout_seconds double precision,
    max_attempts integer,
    state text,
    note text,
    hung_reason text)
LANGUAGE sql STABLE
AS $$
    WITH f AS (
        -- the owner's row joined once, by its key: the liveness verdict is computed
        -- from it (a join to sk_worker_liveness() would scan the workers per job)
        SELECT r.task_id, r.task_type, r.sk_attempt, r.sk_claim_id, r.task_error_count,
            r.task_last_processing_attempted_at_ts AS started, r.sk_owner_worker_id,
            w.worker_id AS known_worker, w.worker_host, w.worker_pid,
            c.connected, w.worker_heartbeat_at_ts AS heartbeat_at,
            l.heartbeat_age_s, l.reapable_in_s, l.lease_lapsed,
            w.worker_stopped_at_ts IS NOT NULL AS stopped, l.state AS worker_state, l.note AS worker_note,
            t.tt_timeout_seconds, t.tt_max_attempts,
            -- ages only from times within 100 years of now: another application may
            -- write infinity, which PostgreSQL before 17 cannot subtract (an unknown
            -- running time never makes a job without an owner hung)
            CASE WHEN r.task_last_processing_attempted_at_ts > now() - interval '36500 days'
                    AND r.task_last_processing_attempted_at_ts < now() + interval '36500 days'
                THEN extract(epoch FROM now() - r.task_last_processing_attempted_at_ts)
                    ::double precision
            END AS running_s,
            CASE WHEN r.sk_cancel_requested_at_ts > now() - interval '36500 days'
                    AND r.sk_cancel_requested_at_ts < now() + interval '36500 days'
                THEN extract(epoch FROM now() - r.sk_cancel_requested_at_ts)::double precision
            END AS cancel_age_s
        FROM sk_task_results_t r
        LEFT JOIN sk_workers_t w ON w.worker_id = r.sk_owner_worker_id
        CROSS JOIN (SELECT pg_is_in_recovery() AS standby) s
        LEFT JOIN sk_held_worker_locks() h ON h.lock_key = w.worker_lock_key
        CROSS JOIN LATERAL (SELECT sk_worker_connected(w.worker_session_lock, h.lock_key IS NOT NULL,
            s.standby) AS connected) c
        LEFT JOIN LATERAL sk_liveness_verdict(w.worker_heartbeat_at_ts, w.worker_lease_seconds,
            w.worker_lease_margin_seconds, w.worker_stopped_at_ts IS NOT NULL, c.connected) l
            ON w.worker_id IS NOT NULL
        LEFT JOIN sk_task_types_t t ON t.task_type = r.task_type
        WHERE r.task_status = 2
    ),
    v AS (
        SELECT f.*,
            CASE
                WHEN f.sk_owner_worker_id IS NULL THEN
                    CASE WHEN f.running_s > unowned_after_seconds THEN
                        format('no owner recorded; processing for more than %s s',
                            round(unowned_after_seconds::numeric))
                    END
                WHEN f.known_worker IS NULL THEN 'worker gone (no longer registered)'
                WHEN f.lease_lapsed AND f.stopped AND f.connected IS NOT TRUE THEN
                    format('worker stopped (%s pid %s) while the job ran; no heartbeat for %s',
                        f.worker_host, f.worker_pid, sk_seconds_text(f.heartbeat_age_s))
                WHEN f.lease_lapsed AND f.connected THEN
                    format('worker unresponsive (%s pid %s): no heartbeat for %s, connection still open',
                        f.worker_host, f.worker_pid, sk_seconds_text(f.heartbeat_age_s))
                WHEN f.lease_lapsed THEN
                    format('worker gone (%s pid %s): no heartbeat for %s',
                        f.worker_host, f.worker_pid, sk_seconds_text(f.heartbeat_age_s))
            END AS hung_reason,
            f.tt_timeout_seconds IS NOT NULL AND f.running_s > f.tt_timeout_seconds AS over_timeout
        FROM f
    )
    SELECT v.task_id, v.task_type, v.sk_attempt, v.sk_claim_id, v.task_error_count, v.started,
        v.sk_owner_worker_id, v.worker_host, v.worker_pid, v.connected, v.heartbeat_at,
        v.heartbeat_age_s, v.reapable_in_s, v.tt_timeout_seconds, v.tt_max_attempts,
        CASE
            WHEN v.hung_reason IS NOT NULL THEN 'hung'
            WHEN v.cancel_age_s > sk_cancel_deadline_seconds() THEN 'cancel requested, still running'
            WHEN v.cancel_age_s IS NOT NULL THEN 'cancelling'
            WHEN v.sk_owner_worker_id IS NULL THEN 'running (no owner recorded)'
            WHEN v.worker_state = 'alive' AND v.over_timeout THEN 'timed out, still running'
            WHEN v.worker_state = 'alive' THEN 'running'
            ELSE v.worker_state
        END,
        -- what is known in a few words (the worker's host and pid are shown beside it)
        CASE
            WHEN v.sk_owner_worker_id IS NULL AND v.hung_reason IS NOT NULL THEN v.hung_reason
            WHEN v.hung_reason IS NULL AND v.cancel_age_s > sk_cancel_deadline_seconds() THEN
                format('cancel requested %s ago, still running',
                    sk_seconds_text(v.cancel_age_s))
            WHEN v.hung_reason IS NULL AND v.cancel_age_s IS NOT NULL THEN
                format('cancel requested %s ago', sk_seconds_text(v.cancel_age_s))
            WHEN v.sk_owner_worker_id IS NULL AND unowned_after_seconds IS NULL THEN
                'no owner recorded: another consumer (a Stakhanovise.NET one?) runs it'
            WHEN v.sk_owner_worker_id IS NULL THEN
                format('hung after %s s without an owner', round(unowned_after_seconds::numeric))
            WHEN v.known_worker IS NULL THEN 'worker no longer registered'
            WHEN v.worker_state = 'alive' AND v.over_timeout THEN
                format('timed out %s ago, still running',
                    sk_seconds_text(v.running_s - v.tt_timeout_seconds))
            ELSE v.worker_note
        END,
        v.hung_reason
    FROM v
$$;
