-- The circuit breakers holding a waiting job back (150_skconsole_breakers.sql):
-- open or half-open on its type and matching it (sk_breaker_matches), with when
-- it was parked and the due time it gets back; whether it is a canary released
-- and not yet run (then nothing holds it).
SELECT b.breaker_id, b.signature, b.term_path, b.term_value, b.state::integer AS state,
    b.state_at, b.reason,
    CASE WHEN b.state = 1 THEN b.state_at + make_interval(secs => b.cool_down_s) END
        AS half_open_at,
    h.due_at AS parked_due_at,
    (h.canary_at IS NOT NULL AND (r.task_last_processing_attempted_at_ts IS NULL
        OR r.task_last_processing_attempted_at_ts < h.canary_at)) AS canary
FROM sk_tasks_queue_t q
JOIN sk_breakers_t b ON b.task_type = q.task_type AND b.state IN (1, 2)
LEFT JOIN sk_breaker_held_t h ON h.task_id = q.task_id
LEFT JOIN sk_task_results_t r ON r.task_id = q.task_id
WHERE q.task_id = %(task_id)s
    AND sk_breaker_matches(b.term_path, b.term_value, b.signature, q.task_id, q.task_payload)
ORDER BY b.breaker_id
