-- Re-post hung jobs (as sk_inflight_tasks() judges them) from their result
-- rows, recording why as the error. A reap counts as a failed, recoverable
-- attempt: past max attempts the job is parked as 5 Faulted instead, so a job
-- that always hangs cannot loop for ever; but a keyed re-post that arrived
-- while it ran wins: the newest payload runs afresh (1 Unprocessed, error
-- count 0). A job an operator asked to cancel ends 7 Cancelled instead of
-- going back (its worker died before it could stop it). Status and fencing token are re-checked in the UPDATE itself, so
-- two reapers, or a reaper racing the job's own finish, never double-post.
-- MATERIALIZED: the verdict is computed once, not again for each row updated
WITH hung AS MATERIALIZED (
    SELECT i.task_id, i.claim_id, i.hung_reason, i.worker_id,
        coalesce(i.max_attempts, %(default_max_attempts)s) AS max_attempts
    FROM sk_inflight_tasks(%(unowned_s)s) i
    WHERE i.hung_reason IS NOT NULL
        AND (%(ids)s::uuid[] IS NULL OR i.task_id = ANY(%(ids)s::uuid[]))
        -- a worker never reaps its own jobs: it fences them itself (an operator
        -- excludes no one: unowned jobs too, once past unowned_s)
        AND (%(exclude_owner)s::uuid IS NULL OR i.worker_id IS DISTINCT FROM %(exclude_owner)s::uuid)
    LIMIT %(limit)s
),
reaped AS (
    UPDATE sk_task_results_t r SET
        task_status = CASE WHEN r.sk_rerun_requested THEN 1
                           WHEN r.sk_cancel_requested_at_ts IS NOT NULL THEN 7
                           WHEN r.task_error_count + 1 >= h.max_attempts THEN 5 ELSE 4 END,
        task_error_count = CASE WHEN r.sk_rerun_requested THEN 0 ELSE r.task_error_count + 1 END,
        task_last_error = CASE
            WHEN r.sk_cancel_requested_at_ts IS NOT NULL AND NOT r.sk_rerun_requested
            THEN sk_task_error('skconsole.JobCancelled',
                'cancelled by an operator while it ran; its worker was gone: ' || h.hung_reason)
            ELSE sk_task_error('skconsole.HungJob', h.hung_reason) END,
        task_last_error_is_recoverable = true,
        task_processing_finalized_at_ts =
            CASE WHEN NOT r.sk_rerun_requested AND (r.sk_cancel_requested_at_ts IS NOT NULL
                    OR r.task_error_count + 1 >= h.max_attempts)
                 THEN now() END,
        -- a keyed re-post that arrived while it ran: the re-run takes its payload
        -- and priority (sk_rerun_value, 110_skconsole_shared.sql)
        task_payload = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_payload, r.task_payload),
        task_priority = sk_rerun_value(r.sk_rerun_requested, r.sk_rerun_priority, r.task_priority),
        sk_rerun_payload = NULL,
        sk_rerun_priority = NULL,
        sk_rerun_requested = false
    FROM hung h
    -- "+ 0": each hung job looked up by its key, whatever the statistics say (a
    -- walk of the status index paired every in-flight job with every hung one)
    WHERE r.task_id = h.task_id AND r.task_status + 0 = 2
        AND r.sk_claim_id IS NOT DISTINCT FROM h.claim_id
    RETURNING r.task_id, r.task_status, r.task_type, r.task_source, r.task_payload,
        r.task_priority, h.hung_reason, r.sk_attempt, r.sk_claim_id, r.task_last_error,
        r.task_last_processing_attempted_at_ts AS started_at, h.worker_id
),
q AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT task_id, task_type, task_source, task_payload, task_priority, now(), now()
    FROM reaped WHERE task_status IN (1, 4)
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
),
notified AS (
    SELECT CASE WHEN count(*) > 0 THEN pg_notify('sk_task_queue_item_added', '') END AS n FROM q
),
-- the reaped attempts, kept in sk_attempts_t (sk_record_attempts,
-- 138_skconsole_attempt_record.sql): only a claim of ours (an unowned job's
-- attempt is another consumer's, unnumbered); the worker as it registered, if
-- it still is
attempted AS MATERIALIZED (
    SELECT sk_record_attempts(array_agg(task_id), array_agg(sk_attempt), array_agg(sk_claim_id),
        array_agg(started_at), array_agg(worker_id), array_agg('reaped'::text),
        array_agg(task_status), array_agg(task_last_error)) AS n
    FROM reaped
)
SELECT reaped.task_id, reaped.task_type, reaped.task_status, reaped.hung_reason
FROM reaped, notified, attempted
