-- The job an edit's preview shows: its status, payload and priority as they
-- are now, and whether it has a queue row (no lock: the edit re-checks).
SELECT r.task_id, r.task_type::text AS task_type, r.task_status AS status,
    r.task_payload AS payload, r.task_priority AS priority, r.task_error_count AS error_count,
    sk_last_activity_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts,
        r.task_posted_at_ts) AS at,
    r.sk_error_signature AS note,
    EXISTS (SELECT 1 FROM sk_tasks_queue_t q WHERE q.task_id = r.task_id) AS queued
FROM sk_task_results_t r
WHERE r.task_id = %(task_id)s::uuid
