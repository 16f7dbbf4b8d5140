-- How many due jobs a claim takes before this one: the order of claim.sql
-- (task_priority, task_locked_until_ts, task_lock_handle_id), among queue rows
-- already due, of every type in %(types)s (the job's own and those the workers
-- that run it also run: a worker claims across its types in that one order),
-- paused types left out (no claim takes them). %(run_at)s is the job's place
-- in that order (now() for a job not due yet: where bump --now puts it).
-- Counted up to %(cap)s. For a type limited per key (key_path set) only its
-- jobs of the same key count: other keys' jobs are claimed beside this one.
SELECT count(*) AS ahead
FROM (
    SELECT 1
    FROM sk_tasks_queue_t q
    WHERE q.task_type = ANY(%(types)s::text[]) AND q.task_locked_until_ts < now()
        AND (q.task_priority, q.task_locked_until_ts, q.task_lock_handle_id)
            < (%(priority)s::integer, %(run_at)s::timestamptz, %(lock_handle_id)s::bigint)
        AND NOT EXISTS (SELECT 1 FROM sk_task_types_t p
                        WHERE p.task_type = q.task_type AND p.tt_paused)
        AND (%(key_path)s::text[] IS NULL OR q.task_type <> %(task_type)s::text
             OR sk_key(sk_try_jsonb(q.task_payload) #>> %(key_path)s::text[]) IS NOT DISTINCT FROM %(key)s::text)
    LIMIT %(cap)s
) AS x
