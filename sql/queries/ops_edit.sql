-- Edit one job's payload (and priority) by id, re-checking in this statement
-- that it still waits or has failed (status as selected: never 2 Processing
-- or 3 Processed). The result row and, when the job waits in the queue, its
-- queue row change together. With %(requeue)s a failed or cancelled job
-- (4-7) is also posted again as 1 Unprocessed, ready now, as ops_requeue.sql
-- does (its error count from 0 with %(reset_errors)s). The result row is
-- already locked by this transaction (ops_edit_lock.sql), so what is decided
-- here reads it as it now stands; the queue row is taken with SKIP LOCKED: a
-- job a worker is claiming right now is left alone. Returns the old and new
-- values.
WITH lq AS (
    SELECT q.task_id FROM sk_tasks_queue_t q
    WHERE q.task_id = ANY(%(ids)s::uuid[])
    FOR UPDATE SKIP LOCKED
),
lr AS (
    SELECT r.task_id, r.task_status AS old_status, r.task_payload AS old_payload,
        r.task_priority AS old_priority,
        r.task_id IN (SELECT task_id FROM lq) AS has_queue_row,
        (%(requeue)s::boolean AND r.task_status <> 1) AS requeued
    FROM sk_task_results_t r
    WHERE r.task_id = ANY(%(ids)s::uuid[])
        AND r.task_status = ANY(%(statuses)s::integer[])
        AND (%(task_type)s::text IS NULL OR r.task_type = %(task_type)s::text)
        AND (r.task_id IN (SELECT task_id FROM lq)
             OR NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id))
    FOR UPDATE OF r SKIP LOCKED
),
edited AS (
    UPDATE sk_task_results_t r SET
        task_payload = %(payload)s::text,
        task_priority = coalesce(%(priority)s::integer, r.task_priority),
        task_status = CASE WHEN lr.requeued THEN 1 ELSE r.task_status END,
        task_processing_finalized_at_ts = CASE WHEN lr.requeued THEN NULL
            ELSE r.task_processing_finalized_at_ts END,
        task_error_count = CASE WHEN lr.requeued AND %(reset_errors)s::boolean THEN 0
            ELSE r.task_error_count END,
        sk_rerun_requested = CASE WHEN lr.requeued THEN false ELSE r.sk_rerun_requested END,
        -- a .NET consumer may take it: it reads only QueuedTaskError JSON
        task_last_error = CASE WHEN lr.requeued THEN sk_error_as_json(r.task_last_error)
            ELSE r.task_last_error END
    FROM lr
    WHERE r.task_id = lr.task_id
    RETURNING r.task_id, r.task_type, r.task_source, r.task_payload, r.task_priority,
        lr.has_queue_row, lr.requeued, lr.old_status, lr.old_payload, lr.old_priority
),
queued AS (
    UPDATE sk_tasks_queue_t q SET
        task_payload = e.task_payload,
        task_priority = e.task_priority,
        task_locked_until_ts = CASE WHEN e.requeued THEN now() ELSE q.task_locked_until_ts END
    FROM edited e
    WHERE q.task_id = e.task_id AND e.has_queue_row
    RETURNING q.task_id
),
-- a requeued job without a queue row gets one, ready now (sk_enqueue,
-- 142_skconsole_shared_writes.sql)
posted AS (
    SELECT sk_enqueue(array_agg(e.task_id), array_agg(e.task_type), array_agg(e.task_source),
        array_agg(e.task_payload), array_agg(e.task_priority), array_agg(now())) AS n
    FROM edited e
    WHERE e.requeued AND NOT e.has_queue_row
),
notified AS (
    SELECT CASE WHEN (SELECT count(*) FROM edited WHERE requeued) > 0
                THEN pg_notify('sk_task_queue_item_added', '') END AS n
    FROM posted
)
SELECT e.task_id, e.old_status, e.old_payload, e.old_priority, e.task_payload, e.task_priority,
    e.requeued, e.task_id IN (SELECT task_id FROM queued) AS queue_row_updated
FROM edited e, notified
