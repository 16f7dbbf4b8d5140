-- Jobs per status on a big results table: the planner's statistics (the most
-- common values of task_status and their frequencies, times the table's row
-- estimate), no scan. Statuses too rare to be among them are counted exactly
-- below, from their indexes: those are the small ones.
SELECT s.status::integer AS status, round(s.freq * c.reltuples)::bigint AS jobs
FROM pg_stats st
CROSS JOIN LATERAL unnest(st.most_common_vals::text::integer[], st.most_common_freqs) AS s(status, freq)
CROSS JOIN (SELECT greatest(reltuples, 0) AS reltuples FROM pg_class WHERE oid = to_regclass('sk_task_results_t')) c
WHERE st.schemaname = current_schema() AND st.tablename = 'sk_task_results_t' AND st.attname = 'task_status'
