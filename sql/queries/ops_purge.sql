-- Delete one batch of final results (statuses given: 3, 6, 7, and 5 only when
-- asked) matching the selection, re-checked here: never a waiting job (one
-- with a queue row) nor one in flight. Rows locked by anyone are skipped, so
-- a batch never waits; the caller loops until a batch comes back short.
-- Their attempts are deleted with them.
WITH doomed AS (
    SELECT r.task_id
    FROM sk_task_results_t r
    WHERE sk_selected(r.task_id, r.task_status, r.task_type, r.sk_error_signature, true, r.task_payload,
        sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
            r.task_posted_at_ts),
        %(statuses)s::integer[], %(ids)s::uuid[], %(task_type)s::text, %(signature)s::text,
        %(where_path)s::text[], %(where_value)s::text, %(where_rest)s::jsonb, %(cutoff)s::timestamptz)
        AND NOT EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id)
    LIMIT %(batch)s
    FOR UPDATE OF r SKIP LOCKED
)
-- deleted with their attempts, a success kept for the jobs after them
-- (sk_purge_results, 142_skconsole_shared_writes.sql)
SELECT p.task_id
FROM sk_purge_results(ARRAY(SELECT d.task_id FROM doomed d), %(statuses)s::integer[]) AS p
