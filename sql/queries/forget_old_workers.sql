-- Workers that stopped (or died) long ago and own no in-flight job, forgotten by
-- one worker at a time (the maintenance lock; the others skip the round).
-- The metric and execution-time rows of those that stopped cleanly are folded
-- into the %(retired)s owner's, so a fleet's restarts do not grow those tables
-- without end, and every reader's sums stay what they were. A clean stop is
-- written after the worker's last totals, so nothing writes those rows again.
-- A worker that died keeps its rows: it may be alive behind a partition and
-- still write its totals (absolute values) under its own owner id.
WITH got AS (
    SELECT pg_try_advisory_xact_lock(sk_maintenance_lock_class(), 2) AS locked
),
gone AS (
    DELETE FROM sk_workers_t w
    WHERE (SELECT locked FROM got)
        AND coalesce(w.worker_stopped_at_ts, w.worker_heartbeat_at_ts)
            < now() - %(after_s)s * interval '1 second'
        AND NOT EXISTS (
            SELECT 1 FROM sk_task_results_t r
            WHERE r.task_status = 2 AND r.sk_owner_worker_id = w.worker_id)
    RETURNING w.worker_id, w.worker_process_id, w.worker_pid, w.worker_stopped_at_ts
),
owners AS (  -- how a worker names its rows (Engine.metrics_owner)
    SELECT right(g.worker_process_id || ':' || g.worker_pid || ':'
        || left(replace(g.worker_id::text, '-', ''), 8), 250) AS owner
    FROM gone g
    WHERE g.worker_stopped_at_ts IS NOT NULL
),
folded_metrics AS (
    DELETE FROM sk_metrics_t m USING owners o
    WHERE m.metric_owner_process_id = o.owner
    RETURNING m.metric_id, m.metric_category, m.metric_value, m.metric_last_updated
),
folded_times AS (
    DELETE FROM sk_task_execution_time_stats_t s USING owners o
    WHERE s.et_owner_process_id = o.owner
    RETURNING s.et_payload_type, s.et_n_execution_cycles, s.et_last_execution_time,
        s.et_fastest_execution_time, s.et_longest_execution_time, s.et_total_execution_time
),
retired_metrics AS (
    INSERT INTO sk_metrics_t AS t (metric_id, metric_owner_process_id, metric_category,
        metric_value, metric_last_updated)
    SELECT f.metric_id, %(retired)s, min(f.metric_category), sum(f.metric_value)::bigint,
        max(f.metric_last_updated)
    FROM folded_metrics f
    GROUP BY f.metric_id
    ON CONFLICT (metric_id, metric_owner_process_id) DO UPDATE SET
        metric_value = t.metric_value + EXCLUDED.metric_value,
        metric_last_updated = greatest(t.metric_last_updated, EXCLUDED.metric_last_updated)
),
retired_times AS (
    INSERT INTO sk_task_execution_time_stats_t AS t (et_payload_type, et_owner_process_id,
        et_n_execution_cycles, et_last_execution_time, et_avg_execution_time,
        et_fastest_execution_time, et_longest_execution_time, et_total_execution_time)
    SELECT f.et_payload_type, %(retired)s, sum(f.et_n_execution_cycles)::bigint,
        max(f.et_last_execution_time),
        (sum(f.et_total_execution_time) / greatest(sum(f.et_n_execution_cycles), 1))::bigint,
        min(f.et_fastest_execution_time), max(f.et_longest_execution_time),
        sum(f.et_total_execution_time)::bigint
    FROM folded_times f
    GROUP BY f.et_payload_type
    ON CONFLICT (et_payload_type, et_owner_process_id) DO UPDATE SET
        et_n_execution_cycles = t.et_n_execution_cycles + EXCLUDED.et_n_execution_cycles,
        et_total_execution_time = t.et_total_execution_time + EXCLUDED.et_total_execution_time,
        et_avg_execution_time = (t.et_total_execution_time + EXCLUDED.et_total_execution_time)
            / greatest(t.et_n_execution_cycles + EXCLUDED.et_n_execution_cycles, 1),
        et_fastest_execution_time = least(t.et_fastest_execution_time,
            EXCLUDED.et_fastest_execution_time),
        et_longest_execution_time = greatest(t.et_longest_execution_time,
            EXCLUDED.et_longest_execution_time),
        et_last_execution_time = EXCLUDED.et_last_execution_time
)
SELECT (SELECT count(*) FROM gone) AS forgotten, (SELECT count(*) FROM owners) AS stopped,
    (SELECT count(*) FROM folded_metrics) + (SELECT count(*) FROM folded_times) AS folded
