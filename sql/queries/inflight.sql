-- Jobs in 2 Processing with the one liveness and hung verdict
-- (sk_inflight_tasks): hung ones first, then the longest running. Totals are
-- counted before the limit. How long a job has run is told only from a start
-- within 100 years of now (another application may write infinity there).
-- Progress is the running attempt's own (sk_task_progress_t with its claim id).
SELECT i.task_id, i.task_type, i.task_attempt AS attempt, i.task_error_count AS error_count,
    i.attempt_started_at AS started_at,
    CASE WHEN i.attempt_started_at > clock_timestamp() - interval '36500 days'
            AND i.attempt_started_at < clock_timestamp() + interval '36500 days'
        THEN extract(epoch FROM clock_timestamp() - i.attempt_started_at)::double precision
    END AS running_s,
    i.worker_id, i.worker_host, i.worker_pid, i.worker_connected, i.heartbeat_age_s,
    i.timeout_seconds AS timeout_s, i.state, i.note, i.hung_reason, i.reapable_in_s,
    p.progress_fraction, p.progress_message, p.progress_at_ts AS progress_at,
    count(*) OVER () AS total,
    count(*) FILTER (WHERE i.hung_reason IS NOT NULL) OVER () AS hung
FROM sk_inflight_tasks(%(unowned_s)s) i
LEFT JOIN sk_task_progress_t p ON p.task_id = i.task_id AND p.claim_id = i.claim_id
ORDER BY i.hung_reason IS NULL, i.attempt_started_at, i.task_id
LIMIT %(limit)s
