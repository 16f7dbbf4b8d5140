-- How many due jobs of the same type a claim takes before this one: the order
-- of claim.sql (task_priority, task_locked_until_ts, task_lock_handle_id),
-- among queue rows already due. Counted up to %(cap)s.
SELECT count(*) AS ahead
FROM (
    SELECT 1
    FROM sk_tasks_queue_t q
    WHERE q.task_type = %(task_type)s::text AND q.task_locked_until_ts < now()
        AND (q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id)
            < (%(priority)s::integer, %(run_at)s::timestamptz, %(lock_handle_id)s::bigint)
    LIMIT %(cap)s
) AS x
