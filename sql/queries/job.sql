-- One job in full: its result row, the full last error, its queue row if it
-- waits, its lineage (the job that posted it and that job's type: a left join,
-- the parent may have been purged) and how many jobs it posted (on the
-- parent index, idx_sk_task_results_parent), the running attempt's progress,
-- and how many jobs it was posted after= (fan-in; job_after.sql lists them).
SELECT r.task_id, r.task_type, r.task_source AS source, r.task_payload AS payload,
    r.task_status AS status, r.task_priority AS priority, r.task_error_count AS error_count,
    r.task_last_error AS last_error, r.task_last_error_is_recoverable AS recoverable,
    r.task_processing_time_milliseconds AS processing_ms, r.task_posted_at_ts AS posted_at,
    r.task_first_processing_attempted_at_ts AS first_attempt_at,
    r.task_last_processing_attempted_at_ts AS last_attempt_at,
    r.task_processing_finalized_at_ts AS finalized_at,
    r.sk_owner_worker_id AS owner_worker_id, r.sk_attempt AS attempt,
    r.sk_error_signature AS signature, q.task_locked_until_ts AS queued_until,
    r.sk_parent_task_id AS parent_task_id, parent.task_type AS parent_task_type,
    r.sk_pipeline AS pipeline, r.sk_stage AS stage, r.sk_snooze_count AS snooze_count,
    (SELECT count(*) FROM sk_task_results_t c WHERE c.sk_parent_task_id = r.task_id) AS children,
    p.progress_fraction, p.progress_message, p.progress_at_ts AS progress_at,
    coalesce(cardinality(r.sk_after_ids), 0) AS after_count
FROM sk_task_results_t r
LEFT JOIN sk_tasks_queue_t q ON q.task_id = r.task_id
LEFT JOIN sk_task_results_t parent ON parent.task_id = r.sk_parent_task_id
LEFT JOIN sk_task_progress_t p
    ON p.task_id = r.task_id AND p.claim_id = r.sk_claim_id AND r.task_status = 2
WHERE r.task_id = %(task_id)s
