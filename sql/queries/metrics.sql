-- App metrics summed over owner processes, by category. The retired totals
-- (stopped workers' rows, folded) count in the sums but not as a process.
SELECT metric_category::text, metric_id::text, sum(metric_value)::bigint,
    count(*) FILTER (WHERE metric_owner_process_id <> %(retired)s),
    max(metric_last_updated)
FROM sk_metrics_t
GROUP BY metric_category, metric_id
ORDER BY 1, 2
