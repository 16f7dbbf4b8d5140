-- Record successful attempts, fenced: only a result row still 2 Processing,
-- owned by this worker, at this attempt changes. A job re-posted by key while
-- it ran goes back to the queue (1 Unprocessed) instead of 3 Processed.
WITH d AS (
    SELECT * FROM unnest(%(ids)s::uuid[], %(attempts)s::integer[], %(ms)s::bigint[])
        AS d(task_id, attempt, ms)
),
done AS (
    UPDATE sk_task_results_t r SET
        task_status = CASE WHEN r.sk_rerun_requested THEN 1 ELSE 3 END,
        task_processing_finalized_at_ts = CASE WHEN r.sk_rerun_requested THEN NULL ELSE now() END,
        task_processing_time_milliseconds = r.task_processing_time_milliseconds + d.ms,
        task_error_count = CASE WHEN r.sk_rerun_requested THEN 0 ELSE r.task_error_count END,
        sk_rerun_requested = false
    FROM d
    -- "= ANY" and "+ 0": only the primary key may serve this, whatever the
    -- statistics say (why: FINISH_SESSION in skconsole/worker/engine.py)
    WHERE r.task_id = ANY(%(ids)s::uuid[]) AND r.task_id = d.task_id AND r.task_status + 0 = 2
        AND r.sk_owner_worker_id = %(worker_id)s AND r.sk_attempt = d.attempt
    RETURNING r.task_id, r.task_status, r.task_type, r.task_source, r.task_payload, r.task_priority
),
rerun AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT task_id, task_type, task_source, task_payload, task_priority, now(), now()
    FROM done WHERE task_status = 1
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
)
SELECT done.task_id, (SELECT count(*) FROM rerun) AS reposted FROM done
