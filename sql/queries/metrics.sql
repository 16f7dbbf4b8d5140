-- App metrics summed over owner processes, by category.
SELECT metric_category::text, metric_id::text, sum(metric_value)::bigint, count(*),
    max(metric_last_updated)
FROM sk_metrics_t
GROUP BY metric_category, metric_id
ORDER BY 1, 2
