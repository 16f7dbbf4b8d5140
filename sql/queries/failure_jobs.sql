-- The jobs of one failure group, latest failure first (drill-down), with the
-- group's size. Ranks along the partial index, then reads the few rows shown.
WITH latest AS (
    SELECT r.task_id,
        sk_last_run_at(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts) AS seen_at,
        count(*) OVER () AS total
    FROM sk_task_results_t r
    WHERE r.task_status IN (4, 5, 6)
        AND sk_signature_matches(r.sk_error_signature, %(signature)s::text)
    ORDER BY seen_at DESC NULLS LAST, r.task_id
    LIMIT %(limit)s
)
SELECT r.task_id, r.task_type, r.task_status AS status, r.task_priority AS priority,
    r.task_error_count AS error_count, l.seen_at AS failed_at,
    sk_error_final_line(r.task_last_error) AS error_line, l.total
FROM latest l JOIN sk_task_results_t r ON r.task_id = l.task_id
ORDER BY l.seen_at DESC NULLS LAST, r.task_id
