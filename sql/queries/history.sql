-- Jobs posted, processed and failed per minute over the last %(minutes)s
-- minutes, the current (partial) minute last, from the job rows: only for a
-- database with Stakhanovise.NET's tables alone (read degraded; with skconsole's
-- objects, the per-minute record answers: record.sql). Posted and processed are
-- range counts on an index per minute (no sort of the whole hour); "failed"
-- counts jobs whose latest attempt failed (4, 5, 6), at the time it failed.
-- Runs without skconsole's functions, so it spells out sk_last_run_at()
-- (110_skconsole_shared.sql).
WITH minutes AS (
    SELECT m AS minute
    FROM generate_series(date_trunc('minute', now()) - (%(minutes)s - 1) * interval '1 minute',
                         date_trunc('minute', now()), interval '1 minute') AS m
),
failed AS (
    SELECT date_trunc('minute', f.at) AS minute, count(*) AS n
    FROM (
        SELECT coalesce(r.task_processing_finalized_at_ts, r.task_last_processing_attempted_at_ts) AS at
        FROM sk_task_results_t r
        WHERE r.task_status IN (4, 5, 6)
    ) f
    WHERE f.at >= date_trunc('minute', now()) - (%(minutes)s - 1) * interval '1 minute'
    GROUP BY 1
)
SELECT m.minute,
    (SELECT count(*) FROM sk_task_results_t r
     WHERE r.task_posted_at_ts >= m.minute
        AND r.task_posted_at_ts < m.minute + interval '1 minute') AS posted,
    (SELECT count(*) FROM sk_task_results_t r
     WHERE r.task_status = 3
        AND r.task_processing_finalized_at_ts >= m.minute
        AND r.task_processing_finalized_at_ts < m.minute + interval '1 minute') AS processed,
    coalesce(f.n, 0) AS failed
FROM minutes m
LEFT JOIN failed f ON f.minute = m.minute
ORDER BY m.minute
