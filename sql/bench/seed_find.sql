-- Results for the find benchmark (skconsole.bench.find): skbench.results result
-- rows (set with set_config before this runs) of eight types, in every final
-- status, over the last week; payloads carry a customer id (one of 50,000), a
-- region, an order number and a nested tier; 1 in 200 is not JSON at all. Run
-- in one transaction on an empty schema.
SELECT setseed(0.23);

INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
    task_priority, task_last_error, task_error_count, task_posted_at_ts,
    task_last_processing_attempted_at_ts, task_processing_finalized_at_ts)
SELECT gen_random_uuid(),
    'bench.find' || (g % 8),
    'bench@host',
    CASE WHEN g % 200 = 0 THEN 'legacy text payload ' || g
        ELSE json_build_object(
            'customer', json_build_object('id', g % 50000, 'tier', (ARRAY['gold', 'std', 'trial'])[1 + g % 3]),
            'region', (ARRAY['eu', 'us', 'ap'])[1 + g % 3],
            'order', 'ORD-' || g)::text END,
    CASE WHEN g % 50 = 0 THEN 5 WHEN g % 97 = 0 THEN 6 ELSE 3 END,
    g % 10,
    CASE WHEN g % 50 = 0 THEN 'app.Timeout: upstream timed out for order ORD-' || g END,
    CASE WHEN g % 50 = 0 THEN 1 ELSE 0 END,
    t, t, t
FROM (SELECT g, now() - random() * interval '7 days' AS t
      FROM generate_series(1, current_setting('skbench.results')::bigint) AS g) s;
