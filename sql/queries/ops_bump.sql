-- Change the priority of waiting jobs by id, re-checking in this statement
-- that each still waits and matches. --to sets it; --by lowers the number
-- (floor 0); --now keeps it and makes a job not due yet due at once
-- (task_locked_until_ts = now(), before any later claim's now()). Queue row
-- locked first (SKIP LOCKED: a job being claimed right now is left alone),
-- then its result row follows. A job already due is matched but unchanged.
-- A fan-in job waiting for others (after=: no queue row yet) has its result
-- row changed, which its release copies: its priority, and with --now its
-- run_at (due as soon as it is released).
WITH lq AS (
    SELECT q.task_id,
        CASE WHEN %(now)s::boolean THEN q.task_priority
             WHEN %(to)s::integer IS NOT NULL THEN %(to)s::integer
             ELSE greatest(q.task_priority - %(by)s::integer, 0) END AS new_priority,
        q.task_priority AS old_priority,
        CASE WHEN %(now)s::boolean AND q.task_locked_until_ts > now() THEN now()
             ELSE q.task_locked_until_ts END AS new_until,
        q.task_locked_until_ts AS old_until
    FROM sk_tasks_queue_t q
    LEFT JOIN sk_task_results_t r ON r.task_id = q.task_id
    WHERE q.task_id = ANY(%(ids)s::uuid[])
        AND coalesce(r.task_status, 1) = ANY(%(statuses)s::integer[])
        AND (%(task_type)s::text IS NULL OR q.task_type = %(task_type)s::text)
        AND sk_signature_matches(r.sk_error_signature, %(signature)s::text, r.task_id IS NOT NULL)
        AND (%(cutoff)s::timestamptz IS NULL
             OR sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
                    coalesce(r.task_posted_at_ts, q.task_posted_at_ts)) < %(cutoff)s::timestamptz)
    FOR UPDATE OF q SKIP LOCKED
),
bumped AS (
    UPDATE sk_tasks_queue_t q SET task_priority = l.new_priority, task_locked_until_ts = l.new_until
    FROM lq l
    WHERE q.task_id = l.task_id
        AND (l.new_priority <> l.old_priority OR l.new_until <> l.old_until)
    RETURNING q.task_id, q.task_priority
),
synced AS (
    UPDATE sk_task_results_t r SET task_priority = b.task_priority
    FROM bumped b
    WHERE r.task_id = b.task_id AND NOT %(now)s::boolean
    RETURNING r.task_id
),
lw AS (
    SELECT r.task_id,
        CASE WHEN %(now)s::boolean THEN r.task_priority
             WHEN %(to)s::integer IS NOT NULL THEN %(to)s::integer
             ELSE greatest(r.task_priority - %(by)s::integer, 0) END AS new_priority,
        r.task_priority AS old_priority,
        CASE WHEN %(now)s::boolean AND r.sk_after_run_at > now() THEN now()
             ELSE r.sk_after_run_at END AS new_run_at,
        r.sk_after_run_at AS old_run_at
    FROM sk_task_results_t r
    WHERE r.task_id = ANY(%(ids)s::uuid[]) AND r.task_status = 1
        AND r.task_status = ANY(%(statuses)s::integer[])
        AND EXISTS (SELECT 1 FROM sk_task_after_t e WHERE e.task_id = r.task_id)
        AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)
        AND (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
        AND sk_signature_matches(r.sk_error_signature, %(signature)s::text, true)
        AND (%(cutoff)s::timestamptz IS NULL OR r.task_posted_at_ts < %(cutoff)s::timestamptz)
    FOR UPDATE OF r SKIP LOCKED
),
waiting AS (
    UPDATE sk_task_results_t r SET task_priority = l.new_priority, sk_after_run_at = l.new_run_at
    FROM lw l
    WHERE r.task_id = l.task_id
        AND (l.new_priority <> l.old_priority OR l.new_run_at IS DISTINCT FROM l.old_run_at)
    RETURNING r.task_id
)
SELECT (SELECT count(*) FROM lq) + (SELECT count(*) FROM lw) AS matched,
    (SELECT count(*) FROM bumped) + (SELECT count(*) FROM waiting) AS changed,
    (SELECT count(*) FROM synced) + (SELECT count(*) FROM waiting) AS synced
