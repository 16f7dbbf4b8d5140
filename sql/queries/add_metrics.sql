-- Write this process's totals under Stakhanovise's metric ids, one row per
-- metric and owner process (absolute values, as Stakhanovise.NET writes them).
-- A total only grows: "greatest" keeps a late write of an older total (its
-- connection abandoned, the statement still running) from moving it back.
INSERT INTO sk_metrics_t AS m (metric_id, metric_owner_process_id, metric_category, metric_value,
    metric_last_updated)
SELECT d.metric_id, %(owner)s, d.category, d.value, now()
FROM unnest(%(ids)s::varchar[], %(categories)s::varchar[], %(values)s::bigint[])
    AS d(metric_id, category, value)
ON CONFLICT (metric_id, metric_owner_process_id) DO UPDATE SET
    metric_value = greatest(m.metric_value, EXCLUDED.metric_value),
    metric_last_updated = now()
