-- Why one job waits: its result row, its queue row (when it waits there), its
-- type's stored settings (paused, limits, the rate window as sk_claim_room()
-- judges it) and how many jobs of its type run now. Times against now(), the
-- instant claims compare task_locked_until_ts with. A queue row posted by hand
-- has no result row: it reads as 1 Unprocessed, as the claim treats it.
SELECT k.task_id,
    coalesce(r.task_type, q.task_type)::text AS task_type,
    coalesce(r.task_status, 1) AS status,
    coalesce(r.task_error_count, 0) AS error_count,
    coalesce(r.sk_snooze_count, 0) AS snooze_count,
    r.task_last_processing_attempted_at_ts AS last_attempt_at,
    r.sk_owner_worker_id AS owner_worker_id,
    q.task_id IS NOT NULL AS queued,
    q.task_priority AS priority,
    q.task_locked_until_ts AS run_at,
    q.task_lock_handle_id AS lock_handle_id,
    extract(epoch FROM q.task_locked_until_ts - now())::float8 AS due_in_s,
    now() AS now,
    coalesce(t.tt_paused, false) AS paused,
    t.tt_paused_at_ts AS paused_at,
    t.tt_max_running AS concurrency,
    t.tt_rate_count AS rate_count,
    t.tt_rate_seconds AS rate_seconds,
    t.tt_window_claims AS window_claims,
    t.tt_window_start_ts + make_interval(secs => t.tt_rate_seconds) AS window_ends_at,
    CASE WHEN t.tt_max_running IS NOT NULL THEN
        (SELECT count(*) FROM sk_task_results_t x
         WHERE x.task_status = 2 AND x.task_type = coalesce(r.task_type, q.task_type))
    END AS running
FROM (SELECT %(task_id)s::uuid AS task_id) AS k
LEFT JOIN sk_task_results_t r ON r.task_id = k.task_id
LEFT JOIN sk_tasks_queue_t q ON q.task_id = k.task_id
LEFT JOIN sk_task_types_t t ON t.task_type = coalesce(r.task_type, q.task_type)
WHERE r.task_id IS NOT NULL OR q.task_id IS NOT NULL
