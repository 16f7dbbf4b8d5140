-- Change the priority of waiting jobs by id, re-checking in this statement
-- that each still waits and matches. --to sets it; --by lowers the number
-- (floor 0); --now keeps it and makes a job not due yet due at once
-- (task_locked_until_ts = now(), before any later claim's now()). Queue row
-- locked first (SKIP LOCKED: a job being claimed right now is left alone),
-- then its result row follows. A job already due is matched but unchanged.
-- A fan-in job waiting for others (after=: no queue row yet) has its result
-- row changed, which its release copies: its priority, and with --now its
-- run_at (due as soon as it is released).
-- The batch is re-checked against the selection as its preview listed it
-- (sk_waiting_selection, 140_skconsole_selection.sql: status, type, group, age;
-- the --where terms were the preview's): a queue row matches its queue rows, a
-- job without one its fan-in jobs.
WITH lq AS (
    SELECT q.task_id, true AS queued, q.task_priority AS old_priority,
        q.task_locked_until_ts AS old_at
    FROM sk_tasks_queue_t q
    JOIN sk_waiting_selection(%(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text,
        %(signature)s::text, NULL, NULL, NULL, %(cutoff)s::timestamptz) AS s ON s.task_id = q.task_id
    WHERE q.task_id = ANY(%(ids)s::uuid[])
    FOR UPDATE OF q SKIP LOCKED
),
lw AS (
    SELECT r.task_id, false AS queued, r.task_priority AS old_priority,
        r.sk_after_run_at AS old_at
    FROM sk_task_results_t r
    JOIN sk_waiting_selection(%(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text,
        %(signature)s::text, NULL, NULL, NULL, %(cutoff)s::timestamptz) AS s ON s.task_id = r.task_id
    WHERE r.task_id = ANY(%(ids)s::uuid[]) AND r.task_status = 1
        AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)
    FOR UPDATE OF r SKIP LOCKED
),
-- what bump makes of each job's priority, and with --now of when it is due:
-- a queue row's task_locked_until_ts, a fan-in job's run_at
wanted AS (
    SELECT l.task_id, l.queued, l.old_priority, l.old_at,
        CASE WHEN %(now)s::boolean THEN l.old_priority
             WHEN %(to)s::integer IS NOT NULL THEN %(to)s::integer
             ELSE greatest(l.old_priority - %(by)s::integer, 0) END AS new_priority,
        CASE WHEN %(now)s::boolean AND l.old_at > now() THEN now() ELSE l.old_at END AS new_at
    FROM (SELECT * FROM lq UNION ALL SELECT * FROM lw) AS l
),
bumped AS (
    UPDATE sk_tasks_queue_t q SET task_priority = w.new_priority, task_locked_until_ts = w.new_at
    FROM wanted w
    WHERE q.task_id = w.task_id AND w.queued
        AND (w.new_priority <> w.old_priority OR w.new_at IS DISTINCT FROM w.old_at)
    RETURNING q.task_id, q.task_priority
),
synced AS (
    UPDATE sk_task_results_t r SET task_priority = b.task_priority
    FROM bumped b
    WHERE r.task_id = b.task_id AND NOT %(now)s::boolean
    RETURNING r.task_id
),
waiting AS (
    UPDATE sk_task_results_t r SET task_priority = w.new_priority, sk_after_run_at = w.new_at
    FROM wanted w
    WHERE r.task_id = w.task_id AND NOT w.queued
        AND (w.new_priority <> w.old_priority OR w.new_at IS DISTINCT FROM w.old_at)
    RETURNING r.task_id
)
SELECT (SELECT count(*) FROM wanted) AS matched,
    (SELECT count(*) FROM bumped) + (SELECT count(*) FROM waiting) AS changed,
    (SELECT count(*) FROM synced) + (SELECT count(*) FROM waiting) AS synced
