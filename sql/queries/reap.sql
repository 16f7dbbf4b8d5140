-- Re-post hung jobs from their result rows, recording why as the error. A reap
-- counts as a failed, recoverable attempt: past max attempts the job is parked
-- as 5 Faulted instead, so a job that always hangs cannot loop for ever. The
-- attempt and status are re-checked in the UPDATE itself, so two reapers, or a
-- reaper racing the job's own finish, never double-post.
WITH hung AS (
    SELECT i.task_id, i.task_attempt, i.hung_reason,
        coalesce(i.max_attempts, %(default_max_attempts)s) AS max_attempts
    FROM sk_inflight_tasks(%(stale_s)s, %(grace_s)s, %(unowned_s)s) i
    WHERE i.hung_reason IS NOT NULL
        AND (%(ids)s::uuid[] IS NULL OR i.task_id = ANY(%(ids)s::uuid[]))
        -- a worker never reaps its own jobs: it knows it is alive, and enforces
        -- their timeouts itself (its liveness lock may be briefly gone on a reconnect)
        AND i.worker_id IS DISTINCT FROM %(exclude_owner)s::uuid
        -- a free liveness lock with a fresh heartbeat is a blip on the owner's
        -- control connection, not a death: wait until its heartbeat has stopped
        -- too, or the jobs would run twice (a killed worker stops heartbeating)
        AND (i.worker_alive IS NOT FALSE OR i.heartbeat_at IS NULL
             OR i.heartbeat_at < clock_timestamp() - make_interval(secs => %(liveness_grace_s)s))
    LIMIT %(limit)s
),
reaped AS (
    UPDATE sk_task_results_t r SET
        task_status = CASE WHEN r.task_error_count + 1 >= h.max_attempts THEN 5 ELSE 4 END,
        task_error_count = r.task_error_count + 1,
        task_last_error = 'skconsole.HungJob: ' || h.hung_reason,
        task_last_error_is_recoverable = true,
        task_processing_finalized_at_ts =
            CASE WHEN r.task_error_count + 1 >= h.max_attempts THEN now() END
    FROM hung h
    WHERE r.task_id = h.task_id AND r.task_status = 2 AND r.sk_attempt = h.task_attempt
    RETURNING r.task_id, r.task_status, r.task_type, r.task_source, r.task_payload,
        r.task_priority, h.hung_reason
),
q AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT task_id, task_type, task_source, task_payload, task_priority, now(), now()
    FROM reaped WHERE task_status = 4
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
),
notified AS (
    SELECT CASE WHEN count(*) > 0 THEN pg_notify('sk_task_queue_item_added', '') END AS n FROM q
)
SELECT reaped.task_id, reaped.task_type, reaped.task_status, reaped.hung_reason
FROM reaped, notified
