-- App metrics over owner processes, each by its kind. Stakhanovise.NET's
-- processes and ours write absolute values per process: counters and totals
-- add up over processes ("sum"), a process's minimum or maximum does not: the
-- fleet's is the least minimum ("min": ids like queue-consumer@minimum-...,
-- task-buffer@min-count) or the greatest maximum ("max"). A .NET process starts
-- them at long.MaxValue / long.MinValue: such a value means "none yet" and is
-- left out (NULL when no process has one). Sums are numeric: they never
-- overflow, whatever the rows hold. The retired totals (stopped workers' rows,
-- folded) count in the sums but not as a process. .NET spells its workers'
-- category "task-worer"; it is read as ours, "task-worker".
WITH m AS (
    SELECT CASE metric_category WHEN 'task-worer' THEN 'task-worker'
                ELSE metric_category::text END AS category,
        metric_id::text AS metric_id, metric_value, metric_owner_process_id,
        metric_last_updated,
        CASE WHEN split_part(metric_id, '@', 2) ~ '^(minimum|min)-' THEN 'min'
             WHEN split_part(metric_id, '@', 2) ~ '^(maximum|max)-' THEN 'max'
             ELSE 'sum' END AS kind
    FROM sk_metrics_t
)
SELECT category, metric_id, kind,
    CASE kind
        WHEN 'min' THEN min(metric_value) FILTER (WHERE metric_value <> 9223372036854775807)
        WHEN 'max' THEN max(metric_value) FILTER (WHERE metric_value <> -9223372036854775808)
        ELSE sum(metric_value) END AS value,
    count(*) FILTER (WHERE metric_owner_process_id <> %(retired)s) AS processes,
    max(metric_last_updated) AS updated_at
FROM m
GROUP BY category, metric_id, kind
ORDER BY 1, 2
