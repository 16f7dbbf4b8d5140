-- How many due jobs of the same type a claim takes before this one: the order
-- of claim.sql (task_priority, task_locked_until_ts, task_lock_handle_id),
-- among queue rows already due. Counted up to %(cap)s. For a type limited per
-- key (key_path set) only the jobs of the same key count: other keys' jobs
-- are claimed beside this one, not before it.
SELECT count(*) AS ahead
FROM (
    SELECT 1
    FROM sk_tasks_queue_t q
    WHERE q.task_type = %(task_type)s::text AND q.task_locked_until_ts < now()
        AND (q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id)
            < (%(priority)s::integer, %(run_at)s::timestamptz, %(lock_handle_id)s::bigint)
        AND (%(key_path)s::text[] IS NULL
             OR sk_key(sk_try_jsonb(q.task_payload) #>> %(key_path)s::text[]) IS NOT DISTINCT FROM %(key)s::text)
    LIMIT %(cap)s
) AS x
