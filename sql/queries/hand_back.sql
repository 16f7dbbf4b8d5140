-- Give jobs this worker holds but will not finish back to the queue at once
-- (shutdown, or claimed beyond what it can still run): 1 Unprocessed, ready now.
WITH d AS (
    SELECT * FROM unnest(%(ids)s::uuid[], %(attempts)s::integer[]) AS d(task_id, attempt)
),
back AS (
    UPDATE sk_task_results_t r SET task_status = 1
    FROM d
    -- "= ANY" and "+ 0": only the primary key may serve this, whatever the
    -- statistics say (why: FINISH_SESSION in skconsole/worker/engine.py)
    WHERE r.task_id = ANY(%(ids)s::uuid[]) AND r.task_id = d.task_id AND r.task_status + 0 = 2
        AND r.sk_owner_worker_id = %(worker_id)s AND r.sk_attempt = d.attempt
    RETURNING r.task_id, r.task_type, r.task_source, r.task_payload, r.task_priority
),
q AS (
    INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
        task_posted_at_ts, task_locked_until_ts)
    SELECT task_id, task_type, task_source, task_payload, task_priority, now(), now() FROM back
    ON CONFLICT (task_id) DO NOTHING
    RETURNING task_id
)
SELECT (SELECT count(*) FROM back), CASE WHEN (SELECT count(*) FROM q) > 0
    THEN pg_notify('sk_task_queue_item_added', '') END
