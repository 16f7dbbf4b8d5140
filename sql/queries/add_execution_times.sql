-- Write this process's execution-time totals per task type into
-- Stakhanovise's stats table (milliseconds), one row per type and owner process
-- (absolute values, as Stakhanovise.NET writes them). A late write of older
-- totals (fewer executions) changes nothing.
INSERT INTO sk_task_execution_time_stats_t AS s (et_payload_type, et_owner_process_id,
    et_n_execution_cycles, et_last_execution_time, et_avg_execution_time,
    et_fastest_execution_time, et_longest_execution_time, et_total_execution_time)
SELECT d.task_type, %(owner)s, d.n, d.last_ms, d.total_ms / greatest(d.n, 1), d.fastest_ms,
    d.longest_ms, d.total_ms
FROM unnest(%(types)s::varchar[], %(n)s::bigint[], %(last_ms)s::bigint[], %(fastest_ms)s::bigint[],
    %(longest_ms)s::bigint[], %(total_ms)s::bigint[])
    AS d(task_type, n, last_ms, fastest_ms, longest_ms, total_ms)
ON CONFLICT (et_payload_type, et_owner_process_id) DO UPDATE SET
    et_n_execution_cycles = EXCLUDED.et_n_execution_cycles,
    et_last_execution_time = EXCLUDED.et_last_execution_time,
    et_total_execution_time = EXCLUDED.et_total_execution_time,
    et_avg_execution_time = EXCLUDED.et_avg_execution_time,
    et_fastest_execution_time = EXCLUDED.et_fastest_execution_time,
    et_longest_execution_time = EXCLUDED.et_longest_execution_time
WHERE EXCLUDED.et_n_execution_cycles >= s.et_n_execution_cycles
