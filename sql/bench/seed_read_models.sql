-- A big, realistic queue for the read-model benchmark (skconsole.benchmarks.read_models):
-- skbench.queued waiting jobs (90 % ready, 10 % backing off or delayed) and
-- skbench.results result rows in all (both set with set_config before this
-- runs): those of the waiting jobs, a few hundred in flight, 2 % failed (5 Faulted / 6 Fatal, Python tracebacks of eight kinds),
-- 1 % cancelled and the rest processed over the last week (2 % of them in the
-- last hour). Run in one transaction on an empty schema.
SELECT setseed(0.42);

CREATE TEMP TABLE bench_errors (kind integer PRIMARY KEY, template text NOT NULL) ON COMMIT DROP;
INSERT INTO bench_errors VALUES
    (0, 'app.errors.UpstreamTimeout: timeout after %ss calling https://api.partner.example/v2/orders/%s'),
    (1, 'ConnectionRefusedError: connection refused by cache-%s.internal:63%s'),
    (2, 'KeyError: "''shipping_address'' missing in order %s%s"'),
    (3, 'ValueError: cannot parse amount ''%s,00'' for invoice INV-%s'),
    (4, 'app.errors.PaymentDeclined: card declined for customer cus_%s%s: insufficient funds'),
    (5, 'psycopg.errors.UniqueViolation: duplicate key value violates unique constraint "orders_pkey" DETAIL: Key (id)=(%s%s) already exists.'),
    (6, 'FileNotFoundError: [Errno 2] No such file or directory: ''/srv/exports/batch-%s/part-%s.csv'''),
    (7, 'TimeoutError: job exceeded its timeout of %s.%ss');

CREATE TEMP TABLE bench_queue ON COMMIT DROP AS
SELECT gen_random_uuid() AS task_id,
    'bench.t' || lpad(floor(20 * power(random(), 2))::int::text, 2, '0') AS task_type,
    g,
    g % 10 = 0 AS scheduled,
    now() - random() * interval '2 hours' AS posted
FROM generate_series(1, current_setting('skbench.queued')::bigint) AS g;

INSERT INTO sk_tasks_queue_t (task_id, task_type, task_source, task_payload, task_priority,
    task_posted_at_ts, task_locked_until_ts)
SELECT task_id, task_type, 'bench@host', '{"order": ' || g || ', "note": "benchmark payload"}',
    (g % 5), posted,
    CASE WHEN scheduled THEN now() + random() * interval '1 hour' ELSE posted END
FROM bench_queue;

INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
    task_priority, task_last_error, task_error_count, task_last_error_is_recoverable,
    task_posted_at_ts, task_first_processing_attempted_at_ts, task_last_processing_attempted_at_ts)
SELECT q.task_id, q.task_type, 'bench@host', '{}',
    CASE WHEN q.scheduled THEN 4 ELSE 1 END, g % 5,
    CASE WHEN q.scheduled THEN 'Traceback (most recent call last):' || E'\n'
        || '  File "/srv/app/tasks.py", line ' || (40 + g % 7) || ', in handle' || E'\n'
        || '    return client.call(payload)' || E'\n'
        || format(e.template, 28 + g % 6, g) END,
    CASE WHEN q.scheduled THEN 1 + g % 3 ELSE 0 END, q.scheduled,
    q.posted,
    CASE WHEN q.scheduled THEN q.posted END,
    CASE WHEN q.scheduled THEN q.posted END
FROM bench_queue q JOIN bench_errors e ON e.kind = q.g % 8;

-- in flight: owned by registered workers (none holds its liveness lock here,
-- so the in-flight view judges them "worker gone")
INSERT INTO sk_workers_t (worker_id, worker_process_id, worker_host, worker_pid,
    worker_concurrency, worker_task_types, worker_heartbeat_at_ts)
SELECT ('00000000-0000-4000-8000-' || lpad(w::text, 12, '0'))::uuid, 'bench-' || w, 'bench-host-' || w,
    1000 + w, 50, ARRAY['bench.t00', 'bench.t01'], now() - w * interval '1 second'
FROM generate_series(1, 8) AS w;

INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
    task_priority, task_posted_at_ts, task_first_processing_attempted_at_ts,
    task_last_processing_attempted_at_ts, sk_owner_worker_id, sk_attempt)
SELECT gen_random_uuid(), 'bench.t' || lpad((g % 20)::text, 2, '0'), 'bench@host', '{}', 2, 0,
    now() - interval '10 minutes', now() - random() * interval '10 minutes',
    now() - random() * interval '10 minutes',
    ('00000000-0000-4000-8000-' || lpad((1 + g % 8)::text, 12, '0'))::uuid, 1
FROM generate_series(1, 400) AS g;

-- finished: processed, failed (5/6) and cancelled
INSERT INTO sk_task_results_t (task_id, task_type, task_source, task_payload, task_status,
    task_priority, task_last_error, task_error_count, task_last_error_is_recoverable,
    task_processing_time_milliseconds, task_posted_at_ts, task_first_processing_attempted_at_ts,
    task_last_processing_attempted_at_ts, task_processing_finalized_at_ts)
SELECT gen_random_uuid(), d.task_type, 'bench@host', '{}', d.status, 0,
    CASE WHEN d.status IN (5, 6) THEN 'Traceback (most recent call last):' || E'\n'
        || '  File "/srv/app/tasks.py", line ' || (40 + d.g % 7) || ', in handle' || E'\n'
        || '    return client.call(payload)' || E'\n'
        || format(e.template, 28 + d.g % 6, d.g) END,
    CASE WHEN d.status IN (5, 6) THEN 3 ELSE 0 END, d.status = 5,
    d.ms, d.finalized - d.ms * interval '1 millisecond' - interval '1 second',
    d.finalized - d.ms * interval '1 millisecond', d.finalized - d.ms * interval '1 millisecond',
    d.finalized
FROM (
    SELECT g,
        'bench.t' || lpad(floor(20 * power(random(), 2))::int::text, 2, '0') AS task_type,
        CASE WHEN g % 100 < 2 THEN 5 + g % 2 WHEN g % 100 = 2 THEN 7 ELSE 3 END AS status,
        floor(exp(random() * 9))::bigint AS ms,
        now() - CASE WHEN g % 50 = 7 THEN random() * interval '1 hour'
                     ELSE random() * interval '7 days' END AS finalized
    FROM generate_series(1, greatest(current_setting('skbench.results')::bigint - current_setting('skbench.queued')::bigint - 400, 0)) AS g
) AS d
JOIN bench_errors e ON e.kind = d.g % 8
-- written in the order they finished, as a live results table holds them
ORDER BY d.finalized;

INSERT INTO sk_task_types_t (task_type, tt_timeout_seconds, tt_max_attempts, tt_paused)
SELECT 'bench.t' || lpad(t::text, 2, '0'), 60, 5, t = 19 FROM generate_series(0, 19) AS t;

INSERT INTO sk_task_execution_time_stats_t (et_payload_type, et_owner_process_id,
    et_n_execution_cycles, et_last_execution_time, et_avg_execution_time,
    et_fastest_execution_time, et_longest_execution_time, et_total_execution_time)
SELECT 'bench.t' || lpad(t::text, 2, '0'), 'bench-' || p, 10000 + t * p, 40 + t, 50 + t, 1, 8000,
    (10000 + t * p) * (50 + t)
FROM generate_series(0, 19) AS t, generate_series(1, 8) AS p;

INSERT INTO sk_metrics_t (metric_id, metric_owner_process_id, metric_category, metric_value)
SELECT m.id, 'bench-' || p, m.category, 1000 * p
FROM (VALUES
    ('worker@processed-payload-count', 'task-worker'),
    ('worker@successful-processed-payload-count', 'task-worker'),
    ('worker@failed-processed-payload-count', 'task-worker'),
    ('worker@total-processing-time', 'task-worker'),
    ('poller@dequeue-count', 'task-poller'),
    ('queue-consumer@total-dequeue-duration', 'task-queue-consumer'),
    ('listener@task-notification-count', 'task-queue-notification-listener'),
    ('result-queue@result-writes-count', 'task-result-queue')
) AS m(id, category), generate_series(1, 8) AS p;
