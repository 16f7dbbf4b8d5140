-- Add counter deltas under Stakhanovise's metric ids, per owner process.
INSERT INTO sk_metrics_t AS m (metric_id, metric_owner_process_id, metric_category, metric_value,
    metric_last_updated)
SELECT d.metric_id, %(owner)s, d.category, d.delta, now()
FROM unnest(%(ids)s::varchar[], %(categories)s::varchar[], %(deltas)s::bigint[])
    AS d(metric_id, category, delta)
ON CONFLICT (metric_id, metric_owner_process_id) DO UPDATE SET
    metric_value = m.metric_value + EXCLUDED.metric_value,
    metric_last_updated = now()
