-- Requeue jobs by id (a batch of those the operator saw), re-checking in this
-- statement that each still matches: status and filters as selected. Status 1,
-- due now, or, spread over spread_s seconds, at its place in the spread: the
-- batch's ids come in the plan's order, the batch starts at place "position" of
-- "total", and the job at place k (from 0) is due at spread_from + spread_s * k /
-- total. The due time is the queue row's task_locked_until_ts, which every claim
-- waits for. A job whose queue row still exists (4 Error backing off) has that
-- row made due; others get a new queue row. Locks are taken with SKIP LOCKED,
-- queue rows first as a worker's claim does: a job a worker is claiming right
-- now is left alone, never waited for, never posted twice.
WITH due AS (
    SELECT d.task_id,
        CASE WHEN %(spread_s)s::double precision > 0
            THEN %(spread_from)s::timestamptz + make_interval(secs =>
                %(spread_s)s::double precision * (%(position)s::bigint + d.place - 1)
                / greatest(%(total)s::bigint, 1))
            ELSE now() END AS due_at
    FROM unnest(%(ids)s::uuid[]) WITH ORDINALITY AS d(task_id, place)
),
lq AS (
    SELECT q.task_id FROM sk_tasks_queue_t q
    WHERE q.task_id = ANY(%(ids)s::uuid[])
    FOR UPDATE SKIP LOCKED
),
lr AS (
    SELECT r.task_id, r.task_id IN (SELECT task_id FROM lq) AS has_queue_row
    FROM sk_task_results_t r
    WHERE r.task_id = ANY(%(ids)s::uuid[])
        AND r.task_status = ANY(%(statuses)s::integer[])
        AND (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
        AND sk_signature_matches(r.sk_error_signature, %(signature)s::text)
        AND (%(cutoff)s::timestamptz IS NULL
             OR sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
                    r.task_posted_at_ts) < %(cutoff)s::timestamptz)
        AND (r.task_id IN (SELECT task_id FROM lq)
             OR NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id))
    FOR UPDATE OF r SKIP LOCKED
),
moved AS (
    UPDATE sk_task_results_t r SET
        task_status = 1,
        task_processing_finalized_at_ts = NULL,
        task_error_count = CASE WHEN %(reset_errors)s THEN 0 ELSE r.task_error_count END,
        -- a .NET consumer may take it: it reads only QueuedTaskError JSON
        task_last_error = sk_error_as_json(r.task_last_error),
        sk_rerun_requested = false
    FROM lr
    WHERE r.task_id = lr.task_id
    RETURNING r.task_id, r.task_type, r.task_source, r.task_payload, r.task_priority, lr.has_queue_row
),
timed AS (
    SELECT m.*, d.due_at FROM moved m JOIN due d ON d.task_id = m.task_id
),
readied AS (
    UPDATE sk_tasks_queue_t q SET task_locked_until_ts = m.due_at
    FROM timed m
    WHERE q.task_id = m.task_id AND m.has_queue_row
    RETURNING q.task_id
),
-- the others get one (sk_enqueue, 142_skconsole_shared_writes.sql)
posted AS (
    SELECT sk_enqueue(array_agg(m.task_id), array_agg(m.task_type), array_agg(m.task_source),
        array_agg(m.task_payload), array_agg(m.task_priority), array_agg(m.due_at)) AS n
    FROM timed m
    WHERE NOT m.has_queue_row
),
notified AS (
    SELECT CASE WHEN (SELECT count(*) FROM readied) + (SELECT n FROM posted) > 0
                THEN pg_notify('sk_task_queue_item_added', '') END AS n
)
SELECT m.task_id FROM moved m, notified
