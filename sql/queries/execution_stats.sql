-- Execution times per task type, from two populations kept apart:
-- * every run the processes reported (Stakhanovise's per-process aggregates,
--   summed): cycles, total, fastest, longest, the largest "last";
-- * the most recent processed jobs (bounded by a time window and a row limit
--   over all types, read backwards along (task_status, finalized)): their
--   count, average, percentiles, fastest, longest and latest, each of the
--   same jobs, so a percentile never exceeds the longest of its row.
-- Sums are numeric: they never overflow, whatever the rows hold (another
-- application may write bigint's limits). A fastest time of long.MaxValue or a
-- longest of long.MinValue is no time at all (the start values of a .NET
-- minimum and maximum): left out, as metrics.sql does.
WITH s AS (
    SELECT et_payload_type::text AS task_type,
        sum(et_n_execution_cycles) AS cycles,
        sum(et_total_execution_time) AS total_ms,
        min(et_fastest_execution_time) FILTER (WHERE et_fastest_execution_time <> 9223372036854775807)
            AS fastest_ms,
        max(et_longest_execution_time) FILTER (WHERE et_longest_execution_time <> -9223372036854775808)
            AS longest_ms,
        max(et_last_execution_time) AS last_ms
    FROM sk_task_execution_time_stats_t
    GROUP BY et_payload_type
),
recent AS (
    SELECT r.task_type::text AS task_type, r.task_processing_time_milliseconds AS ms,
        r.task_processing_finalized_at_ts AS finalized
    FROM sk_task_results_t r
    WHERE r.task_status = 3
        AND r.task_processing_finalized_at_ts > now() - %(window_s)s * interval '1 second'
    ORDER BY r.task_processing_finalized_at_ts DESC
    LIMIT %(recent_limit)s
),
p AS (
    SELECT task_type, count(*) AS n, avg(ms)::float8 AS avg_ms,
        percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY ms) AS pct,
        min(ms) AS fastest_ms, max(ms) AS longest_ms,
        (array_agg(ms ORDER BY finalized DESC))[1] AS last_ms
    FROM recent
    GROUP BY task_type
)
SELECT coalesce(s.task_type, p.task_type) AS task_type, s.cycles, s.total_ms, s.fastest_ms,
    s.longest_ms, s.last_ms, coalesce(p.n, 0) AS sample, p.avg_ms AS recent_avg_ms, p.pct,
    p.fastest_ms AS recent_fastest_ms, p.longest_ms AS recent_longest_ms,
    p.last_ms AS recent_last_ms
FROM s FULL JOIN p ON p.task_type = s.task_type
ORDER BY 1
