-- Why one job waits: its result row, its queue row (when it waits there), its
-- type's stored settings (paused, limits, the rate window as sk_claim_room()
-- judges it) and how many jobs of its type run now. Times against now(), the
-- instant claims compare task_locked_until_ts with. A queue row posted by hand
-- has no result row: it reads as 1 Unprocessed, as the claim treats it.
-- A per-key limit (128_skconsole_key_limits.sql): the job's key (NULL: its
-- payload lacks the path), the jobs of that key running (counted among the
-- type's in-flight rows only) and the key's rate window.
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
    -- an infinite due time (a breaker's parked job, or one a .NET application wrote)
    -- has no distance: PostgreSQL before 17 cannot subtract it
    CASE WHEN isfinite(q.task_locked_until_ts)
        THEN extract(epoch FROM q.task_locked_until_ts - now())::float8 END AS due_in_s,
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
    END AS running,
    t.tt_key_path AS key_path,
    e.key,
    t.tt_key_max_running AS key_concurrency,
    CASE WHEN t.tt_key_max_running IS NOT NULL THEN
        (SELECT count(*) FROM sk_task_results_t x
         WHERE x.task_status = 2 AND x.task_type = coalesce(r.task_type, q.task_type)
             AND sk_key(sk_try_jsonb(x.task_payload) #>> t.tt_key_path) IS NOT DISTINCT FROM e.key)
    END AS key_running,
    t.tt_key_rate_count AS key_rate_count,
    t.tt_key_rate_seconds AS key_rate_seconds,
    w.claims AS key_window_claims,
    w.window_start_ts + make_interval(secs => t.tt_key_rate_seconds) AS key_window_ends_at
FROM (SELECT %(task_id)s::uuid AS task_id) AS k
LEFT JOIN sk_task_results_t r ON r.task_id = k.task_id
LEFT JOIN sk_tasks_queue_t q ON q.task_id = k.task_id
LEFT JOIN sk_task_types_t t ON t.task_type = coalesce(r.task_type, q.task_type)
LEFT JOIN LATERAL (
    SELECT sk_key(sk_try_jsonb(coalesce(q.task_payload, r.task_payload)) #>> t.tt_key_path) AS key
) AS e ON t.tt_key_path IS NOT NULL
LEFT JOIN sk_task_key_windows_t w ON t.tt_key_rate_count IS NOT NULL
    AND w.task_type = t.task_type AND w.key_missing = (e.key IS NULL)
    AND w.key = coalesce(e.key, '')
WHERE r.task_id IS NOT NULL OR q.task_id IS NOT NULL
