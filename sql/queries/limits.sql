-- The task types with a fleet-wide limit or a limit per key, their jobs running
-- now and, for a concurrency limit per key, how many keys are at it (the
-- in-flight rows of limited types only, through their partial index: bounded
-- by what runs, never by the backlog; so the jobs those keys hold waiting are
-- not counted here).
SELECT t.task_type, t.tt_max_running AS concurrency, t.tt_rate_count AS rate_count,
    t.tt_rate_seconds AS rate_seconds,
    (SELECT count(*) FROM sk_task_results_t r
     WHERE r.task_status = 2 AND r.task_type = t.task_type) AS running,
    t.tt_key_path AS key_path, t.tt_key_max_running AS key_concurrency,
    t.tt_key_rate_count AS key_rate_count, t.tt_key_rate_seconds AS key_rate_seconds,
    (SELECT count(*) FROM (
        SELECT 1
        FROM sk_task_results_t r
        WHERE r.task_status = 2 AND r.task_type = t.task_type AND t.tt_key_max_running IS NOT NULL
        GROUP BY sk_key(sk_try_jsonb(r.task_payload) #>> t.tt_key_path)
        HAVING count(*) >= t.tt_key_max_running
    ) AS k) AS keys_at_limit
FROM sk_task_types_t t
WHERE t.tt_max_running IS NOT NULL OR t.tt_rate_count IS NOT NULL OR t.tt_key_path IS NOT NULL
ORDER BY t.task_type
